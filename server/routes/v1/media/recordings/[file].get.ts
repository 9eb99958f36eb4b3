import * as v from 'valibot'
import { Errors, apiError } from '~/lib/errors'
import { defineApiRoute } from '~/http/define-api-route'
import { verifyRecordingToken } from '~/domain/conversations/read'

// Signed recording audio. The token in the URL is the credential (players cannot send headers). There is
// no audio store yet, so a valid token still answers 404 not_found; an invalid or expired one is 403.
export default defineApiRoute({
  summary: 'Recording audio (signed URL)',
  description:
    'Reached through the url of GET /conversations/{conv}/recording. An invalid or expired token is 403 invalid_token. No audio store is configured in this build: valid tokens answer 404 not_found.',
  tags: ['Conversations'],
  auth: 'public',
  params: v.object({ file: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,128}\.mp3$/, 'Expected <sid>.mp3.')) }),
  query: v.object({ token: v.optional(v.string()) }),
  errors: ['invalid_token'],
  async handler({ runtime, params, query }) {
    const token = query.token
    const sid = params.file.replace(/\.mp3$/, '')
    const claims = typeof token === 'string' ? await verifyRecordingToken(token, sid, runtime.config.secret) : null
    if (!claims) throw apiError('invalid_token', 'The recording URL is invalid or has expired; request a new one.')
    throw Errors.notFound('Recording audio')
  },
})
