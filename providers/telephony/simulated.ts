// The offline default telephony provider. Its "network" is this process: inbound calls come from
// POST /simulator/inbound-calls (a simulated caller speaking through the configured speech provider),
// outbound calls go to the host's simulator (answered unless the number ends in 0000: no answer, 9999:
// fails, 8888: an answering machine), and its media
// protocol is JSON over an in-process pipe: {event: start|media|mark|stop}, audio as base64 PCM16LE at
// 8 kHz like a phone line. Webhooks are signed with a key minted per process, so they verify only here.
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import { base64ToPcm, pcmToBase64 } from '~/lib/audio'
import { simulatedNetwork } from '~/kit/simulated-network'
import { CALL_STATES, defineTelephony, type CallState, type MediaEvent, type WebhookRequest } from '~/kit/telephony'

const NAME = 'simulated'
const SAMPLE_RATE = 8000
const KEY = randomBytes(32)
export const SIGNATURE_HEADER = 'x-simulated-signature'

const canonical = (req: Pick<WebhookRequest, 'url' | 'params'>) =>
  req.url +
  Object.keys(req.params)
    .sort()
    .map((k) => `${k}=${req.params[k]}`)
    .join('&')

/** The signature the simulated network puts on its webhooks (exported for the simulator and tests). */
export const signSimulated = (url: string, params: Record<string, string>) =>
  createHmac('sha256', KEY).update(canonical({ url, params })).digest('base64url')

export { base64ToPcm, pcmToBase64 }

const STATES: readonly CallState[] = CALL_STATES

export default defineTelephony({
  name: NAME,

  async placeCall(req) {
    const providerCallId = `sim_${randomUUID()}`
    // The network's call record, one line per call it was asked to place, with the moment it was asked: the
    // load and chaos runs read what actually reached the provider from the instances' logs (a suspended
    // tenant placed nothing after its suspension was answered, bench/load-consistency.mjs).
    console.log(`[simulated-network] ${new Date().toISOString()} placed ${req.callId} as ${providerCallId}`)
    // The network answers like a real one: asynchronously, after the caller has the call's id.
    setTimeout(() => {
      simulatedNetwork.dial({ ...req, providerCallId })
    }, 20).unref()
    return { providerCallId }
  },

  async hangUp(providerCallId) {
    simulatedNetwork.hangUp(providerCallId)
  },

  // The simulated network has nobody to transfer to: no leg is dialled, so none is billed or reported.
  async transfer() {},

  // The simulated network owns every number: any number may be routed to an agent (decisions "Numbers").
  async ownsNumber() {
    return true
  },

  verifyWebhook(req) {
    const got = req.headers[SIGNATURE_HEADER]
    if (!got) return false
    const want = Buffer.from(signSimulated(req.url, req.params))
    const have = Buffer.from(got)
    return have.length === want.length && timingSafeEqual(have, want)
  },

  parseWebhook(req) {
    const p = req.params
    if (p.Event === 'inbound' && p.CallId && p.From && p.To)
      return { type: 'inbound', providerCallId: p.CallId, from: p.From, to: p.To }
    if (p.Event === 'status' && p.CallId && (STATES as readonly string[]).includes(p.Status))
      return {
        type: 'status',
        providerCallId: p.CallId,
        state: p.Status as CallState,
        durationS: p.Duration && /^\d+$/.test(p.Duration) ? Number(p.Duration) : null,
        answeredBy: p.AnsweredBy === 'machine' ? 'machine' : p.AnsweredBy === 'human' ? 'human' : null,
      }
    return { type: 'ignored' }
  },

  answerInbound(answer) {
    return { contentType: 'application/json', body: JSON.stringify(answer) }
  },

  openMedia(transport) {
    const send = (m: Record<string, unknown>) => transport.send(JSON.stringify(m))
    return {
      sampleRate: SAMPLE_RATE,
      receive(message): MediaEvent | null {
        let m: Record<string, unknown>
        try {
          m = JSON.parse(message)
        } catch {
          return null
        }
        switch (m.event) {
          case 'start':
            return {
              type: 'start',
              providerCallId: String(m.call_id ?? ''),
              streamId: String(m.stream_id ?? ''),
              params: (m.params && typeof m.params === 'object' ? m.params : {}) as Record<string, string>,
            }
          case 'media':
            return typeof m.pcm === 'string' ? { type: 'audio', pcm: base64ToPcm(m.pcm) } : null
          case 'mark':
            return typeof m.name === 'string' ? { type: 'mark', name: m.name } : null
          case 'dtmf':
            return typeof m.digit === 'string' ? { type: 'dtmf', digit: m.digit } : null
          case 'stop':
            return { type: 'stop' }
          default:
            return null
        }
      },
      play: (pcm) => send({ event: 'media', pcm: pcmToBase64(pcm) }),
      clear: () => send({ event: 'clear' }),
      mark: (name) => send({ event: 'mark', name }),
      close: () => transport.close(),
    }
  },
})
