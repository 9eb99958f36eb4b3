// Twilio Programmable Voice. Calls are placed, hung up and transferred through the REST Calls API; Twilio's
// webhooks carry an X-Twilio-Signature (HMAC-SHA1 of the exact public URL it called plus the sorted form
// fields, keyed by the auth token), checked with the official package's validator; the call audio is a
// bidirectional Media Stream (<Connect><Stream>) over a WebSocket: JSON messages carrying 8 kHz μ-law.
//
// Settings are read from the environment at call time, not at import (as providers/chat/openai.ts does):
// TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_API_BASE_URL (default https://api.twilio.com; tests point it
// at a local fake).
//
// The REST calls go through ofetch, not the official client: the client has no clean base-URL option (its
// domains hard-code api.twilio.com, and rewriting them means reaching into internals), loading it costs
// ~180 ms at boot against ~9 ms for the webhooks module alone, and three form POSTs and a GET need nothing more.
import { validateRequest } from 'twilio/lib/webhooks/webhooks.js'
import { ofetch } from 'ofetch'
import { decodeMulaw, encodeMulaw } from '~/lib/audio'
import {
  defineTelephony,
  type CallState,
  type MediaEvent,
  type TelephonyEvent,
  type WebhookRequest,
} from '~/kit/telephony'
import { clientSpan, providerCall } from '~/kit/tracing'

const NAME = 'twilio'
const SAMPLE_RATE = 8000
/** 20 ms of 8 kHz μ-law: one byte per sample. */
const FRAME_SAMPLES = 160
const TIMEOUT_MS = 10_000
export const SIGNATURE_HEADER = 'x-twilio-signature'

const settings = () => ({
  accountSid: process.env.TWILIO_ACCOUNT_SID || '',
  authToken: process.env.TWILIO_AUTH_TOKEN || '',
  baseUrl: (process.env.TWILIO_API_BASE_URL || 'https://api.twilio.com').replace(/\/+$/, ''),
})

// ---- TwiML ------------------------------------------------------------------------------------------------

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }
export const xmlEscape = (s: string) => s.replace(/[&<>"']/g, (c) => XML_ESCAPES[c])
const twiml = (inner: string) => `<?xml version="1.0" encoding="UTF-8"?><Response>${inner}</Response>`

// ---- webhooks ---------------------------------------------------------------------------------------------

/** Twilio's CallStatus values, as the contract's states (busy counts as not answered). */
const STATES: Record<string, CallState> = {
  queued: 'queued',
  initiated: 'queued',
  ringing: 'ringing',
  'in-progress': 'in_progress',
  completed: 'completed',
  busy: 'no_answer',
  'no-answer': 'no_answer',
  failed: 'failed',
  canceled: 'canceled',
}

/** AnsweredBy (answering-machine detection): human, machine_start, machine_end_beep|silence|other, fax, unknown. */
const answeredByOf = (v: string | undefined): 'human' | 'machine' | null =>
  v === 'human' ? 'human' : v && (v.startsWith('machine') || v === 'fax') ? 'machine' : null

const pathOf = (url: string) => {
  try {
    return new URL(url).pathname.replace(/\/+$/, '')
  } catch {
    return ''
  }
}

function statusEvent(p: Record<string, string>): TelephonyEvent {
  const state = STATES[p.CallStatus ?? '']
  if (!p.CallSid || !state) return { type: 'ignored' }
  return {
    type: 'status',
    providerCallId: p.CallSid,
    state,
    durationS: p.CallDuration && /^\d+$/.test(p.CallDuration) ? Number(p.CallDuration) : null,
    answeredBy: answeredByOf(p.AnsweredBy),
  }
}

// ---- REST -------------------------------------------------------------------------------------------------

async function callsApi(
  op: string,
  path: string,
  form: URLSearchParams | null,
  query?: URLSearchParams,
): Promise<Record<string, unknown>> {
  const { accountSid, authToken, baseUrl } = settings()
  if (!accountSid || !authToken) throw new Error(`twilio ${op}: TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN must be set`)
  const url =
    `${baseUrl}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/${path}` + (query ? `?${query.toString()}` : '')
  let res: Awaited<ReturnType<typeof ofetch.raw>>
  try {
    // decisions "Tracing": named by the operation, never the URL (it names the account and the call).
    res = await clientSpan(
      `${NAME} ${op}`,
      providerCall(NAME, op),
      (trace) =>
        ofetch.raw(url, {
          method: form ? 'POST' : 'GET',
          ...(form ? { body: form.toString() } : {}),
          headers: {
            ...trace,
            ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
            accept: 'application/json',
            authorization: `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`,
          },
          timeout: TIMEOUT_MS,
          // A POST that may have reached Twilio is never sent twice (a second call would be placed).
          retry: 0,
          ignoreResponseError: true,
          responseType: 'text',
        }),
      (r) => r.status,
    )
  } catch (err) {
    // Network failure or timeout: ofetch's message names the URL (account SID, never the token).
    throw new Error(`twilio ${op} failed: ${(err as Error).message}`)
  }
  let body: Record<string, unknown> = {}
  try {
    body = JSON.parse(String(res._data ?? '')) as Record<string, unknown>
  } catch {}
  if (res.status >= 300) {
    const message = typeof body.message === 'string' ? body.message : res.statusText || 'no message'
    const code = body.code !== undefined ? ` (Twilio error ${String(body.code)})` : ''
    throw new Error(`twilio ${op} failed: HTTP ${res.status}: ${message}${code}`)
  }
  return body
}

/** A Media Streams message from Twilio, as far as we read it (every field checked before use). */
interface WireMessage {
  event?: unknown
  streamSid?: unknown
  start?: { streamSid?: unknown; callSid?: unknown; customParameters?: Record<string, unknown> } | null
  media?: { track?: unknown; payload?: unknown } | null
  mark?: { name?: unknown } | null
  dtmf?: { digit?: unknown } | null
}

const callPath = (sid: string) => `Calls/${encodeURIComponent(sid)}.json`

export default defineTelephony({
  name: NAME,

  async placeCall(req) {
    if (!req.from) throw new Error('twilio placeCall: a From number is required (one of the account’s Twilio numbers)')
    const form = new URLSearchParams({
      To: req.to,
      From: req.from,
      Url: req.answerUrl,
      Method: 'POST',
      StatusCallback: req.statusUrl,
      StatusCallbackMethod: 'POST',
      MachineDetection: 'Enable',
      TimeLimit: String(req.maxDurationS),
    })
    for (const e of ['initiated', 'ringing', 'answered', 'completed']) form.append('StatusCallbackEvent', e)
    const body = await callsApi('placeCall', 'Calls.json', form)
    if (typeof body.sid !== 'string' || !body.sid) throw new Error('twilio placeCall failed: the answer carried no sid')
    return { providerCallId: body.sid }
  },

  async hangUp(providerCallId) {
    await callsApi('hangUp', callPath(providerCallId), new URLSearchParams({ Status: 'completed' }))
  },

  async transfer(providerCallId, toE164, leg) {
    // New TwiML for the live call: the <Connect><Stream> ends (the media leg closes) and Twilio dials. The
    // dialled leg ends after timeLimit seconds; when it ends Twilio requests `action` with DialCallDuration
    // (parseWebhook: transfer_ended), which bills it, and the call ends with the empty TwiML answered there.
    const dial =
      `<Dial timeLimit="${Math.max(1, Math.floor(leg.maxDurationS))}" action="${xmlEscape(leg.statusUrl)}" method="POST">` +
      `${xmlEscape(toE164)}</Dial>`
    await callsApi('transfer', callPath(providerCallId), new URLSearchParams({ Twiml: twiml(dial) }))
  },

  // IncomingPhoneNumbers filtered by PhoneNumber (Twilio matches partial numbers too, so the answer's numbers
  // are compared exactly). Only the account's own numbers are listed: a number of another account is absent.
  async ownsNumber(e164) {
    const body = await callsApi(
      'ownsNumber',
      'IncomingPhoneNumbers.json',
      null,
      new URLSearchParams({ PhoneNumber: e164, PageSize: '50' }),
    )
    const list = Array.isArray(body.incoming_phone_numbers) ? body.incoming_phone_numbers : []
    return list.some((n) => !!n && typeof n === 'object' && (n as { phone_number?: unknown }).phone_number === e164)
  },

  verifyWebhook(req: WebhookRequest) {
    const { authToken } = settings()
    const signature = req.headers[SIGNATURE_HEADER]
    if (!authToken || !signature) return false
    try {
      return validateRequest(authToken, signature, req.url, req.params)
    } catch {
      // An unparsable URL: nothing Twilio could have signed.
      return false
    }
  },

  // Inbound call, status callback or the end of a transfer leg? The host calls this from /telephony/twilio/voice
  // (the number's voice URL) and /telephony/twilio/status (StatusCallback, and a transfer's <Dial action>: a
  // request carrying DialCallStatus is always the end of a transfer leg). A request to a …/status URL is always a status
  // callback. Elsewhere, a call that is inbound and ringing or in progress is a new inbound call (Twilio's
  // voice webhook: Direction=inbound, CallStatus=ringing); any other known CallStatus (e.g. the answer
  // request of an outbound call, Direction=outbound-api, CallStatus=in-progress) is a status event.
  parseWebhook(req) {
    const p = req.params
    // The <Dial action> request of a transfer: the dialled leg has ended (DialCallDuration: its talk time).
    if (p.DialCallStatus && p.CallSid)
      return {
        type: 'transfer_ended',
        providerCallId: p.CallSid,
        durationS: p.DialCallDuration && /^\d{1,9}$/.test(p.DialCallDuration) ? Number(p.DialCallDuration) : 0,
      }
    if (pathOf(req.url).endsWith('/status') || p.CallbackSource) return statusEvent(p)
    if (
      p.Direction === 'inbound' &&
      (p.CallStatus === 'ringing' || p.CallStatus === 'in-progress') &&
      p.CallSid &&
      p.To
    )
      return { type: 'inbound', providerCallId: p.CallSid, from: p.From ?? '', to: p.To }
    return statusEvent(p)
  },

  answerInbound(answer) {
    if (answer.kind === 'refuse')
      return { contentType: 'text/xml', body: twiml(`<Say>${xmlEscape(answer.message)}</Say><Hangup/>`) }
    const params = Object.entries(answer.params)
      .map(([name, value]) => `<Parameter name="${xmlEscape(name)}" value="${xmlEscape(value)}"/>`)
      .join('')
    return {
      contentType: 'text/xml',
      body: twiml(`<Connect><Stream url="${xmlEscape(answer.mediaUrl)}">${params}</Stream></Connect>`),
    }
  },

  openMedia(transport) {
    // Every message we send names the stream; Twilio tells us its sid in `start`.
    let streamSid = ''
    // μ-law bytes short of a whole frame, held until more audio or a mark.
    let tail = Buffer.alloc(0)
    const send = (event: string, body: Record<string, unknown> = {}) =>
      transport.send(JSON.stringify({ event, streamSid, ...body }))
    return {
      sampleRate: SAMPLE_RATE,
      receive(message): MediaEvent | null {
        let m: WireMessage
        try {
          m = JSON.parse(message)
        } catch {
          return null
        }
        if (!m || typeof m !== 'object') return null
        switch (m.event) {
          case 'start': {
            const start = m.start && typeof m.start === 'object' ? m.start : {}
            // The top-level streamSid and start.streamSid are the same; either is enough.
            streamSid = String(m.streamSid ?? start.streamSid ?? '')
            const custom =
              start.customParameters && typeof start.customParameters === 'object' ? start.customParameters : {}
            const params: Record<string, string> = {}
            for (const [k, v] of Object.entries(custom)) if (typeof v === 'string') params[k] = v
            return { type: 'start', providerCallId: String(start.callSid ?? ''), streamId: streamSid, params }
          }
          case 'media': {
            const media = m.media
            if (!media || typeof media.payload !== 'string') return null
            // A bidirectional stream carries the caller only, but a track other than inbound is never the caller.
            if (media.track !== undefined && media.track !== 'inbound' && media.track !== 'inbound_track') return null
            return { type: 'audio', pcm: decodeMulaw(Buffer.from(media.payload, 'base64')) }
          }
          case 'mark':
            return typeof m.mark?.name === 'string' ? { type: 'mark', name: m.mark.name } : null
          case 'dtmf':
            return typeof m.dtmf?.digit === 'string' ? { type: 'dtmf', digit: m.dtmf.digit } : null
          case 'stop':
            return { type: 'stop' }
          default:
            // `connected` (the first message: protocol and version) and anything unknown.
            return null
        }
      },
      play(pcm) {
        // Audio arrives in pieces of any length as synthesis streams it; Twilio gets whole 20 ms frames, and
        // the rest waits for the next piece or the mark that ends the answer (no padding: the audio stays exact).
        const bytes = tail.length ? Buffer.concat([tail, encodeMulaw(pcm)]) : encodeMulaw(pcm)
        const whole = bytes.length - (bytes.length % FRAME_SAMPLES)
        for (let i = 0; i < whole; i += FRAME_SAMPLES)
          send('media', { media: { payload: bytes.subarray(i, i + FRAME_SAMPLES).toString('base64') } })
        tail = Buffer.from(bytes.subarray(whole))
      },
      clear: () => {
        tail = Buffer.alloc(0)
        send('clear')
      },
      mark: (name) => {
        if (tail.length) send('media', { media: { payload: tail.toString('base64') } })
        tail = Buffer.alloc(0)
        send('mark', { mark: { name } })
      },
      close: () => transport.close(),
    }
  },
})
