import { getHeader, getQuery, setResponseHeader, setResponseStatus } from 'h3'
import * as v from 'valibot'
import { apiError, Errors } from '~/lib/errors'
import { defineApiRoute } from '~/http/define-api-route'
import { clientIpKey } from '~/http/client-ip'
import { sha256Hex } from '~/lib/opaque-token'
import { verifyRecordingToken } from '~/domain/conversations/read'
import { readRecording } from '~/domain/calls/media'

// Signed recording audio. The token in the URL is the credential (players cannot send headers); it names
// one recording and lapses after 15 minutes. Single byte ranges are honoured so that players can seek.
// Metered in the audio class per URL token and per client IP (decisions "Security rules", Small rules).
export default defineApiRoute({
  summary: 'Recording audio (signed URL)',
  description:
    'Reached through the url of GET /conversations/{conv}/recording. Answers audio/mpeg (MP3, caller on the left channel, agent on the right); a Range header of one byte range answers 206. An invalid or expired token is 400 invalid_token; a recording that no longer exists is 404 not_found. ' +
    'Metered in the audio rate class per URL token and per client IP (429 rate_limited with Retry-After).',
  tags: ['Conversations'],
  auth: 'public',
  rateClass: 'audio',
  rateSubjects: (event) => [
    `recording-ip:${clientIpKey(event)}`,
    `recording:${sha256Hex(String(getQuery(event).token ?? '')).slice(0, 32)}`,
  ],
  raw: true,
  params: v.object({ file: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,128}\.mp3$/, 'Expected <sid>.mp3.')) }),
  query: v.object({ token: v.optional(v.string()) }),
  errors: ['invalid_token', 'rate_limited'],
  async handler({ event, runtime, params, query }) {
    const token = query.token
    const sid = params.file.replace(/\.mp3$/, '')
    const claims = typeof token === 'string' ? await verifyRecordingToken(token, sid, runtime.config.secret) : null
    if (!claims) throw apiError('invalid_token', 'The recording URL is invalid or has expired; request a new one.')
    const audio = await readRecording(runtime, claims, sid)
    if (!audio) throw Errors.notFound('Recording audio')
    setResponseHeader(event, 'Content-Type', 'audio/mpeg')
    setResponseHeader(event, 'Accept-Ranges', 'bytes')
    setResponseHeader(event, 'Cache-Control', 'private, max-age=900')
    const range = /^bytes=(\d*)-(\d*)$/.exec(getHeader(event, 'range') ?? '')
    if (range && (range[1] || range[2])) {
      const size = audio.length
      const start = range[1] ? Number(range[1]) : Math.max(0, size - Number(range[2]))
      const end = range[1] && range[2] ? Math.min(Number(range[2]), size - 1) : size - 1
      if (start >= size || start > end) {
        setResponseStatus(event, 416)
        setResponseHeader(event, 'Content-Range', `bytes */${size}`)
        return Buffer.alloc(0)
      }
      setResponseStatus(event, 206)
      setResponseHeader(event, 'Content-Range', `bytes ${start}-${end}/${size}`)
      return audio.subarray(start, end + 1)
    }
    return audio
  },
})
