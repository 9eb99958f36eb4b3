// The simulated telephony network's inbound test mode (POST /simulator/inbound-calls): a caller at `from`
// dials `to` and says each utterance in turn, through the configured speech provider and the simulated
// provider's media protocol over an in-process pipe, exactly the path a real call takes from the media leg
// on. The caller listens to each answer (it keeps sending silence for as long as the answer plays, which
// advances the call's clock), then speaks again; after the last answer it hangs up.
import { randomUUID } from 'node:crypto'
import type * as v from 'valibot'
import { eq } from 'drizzle-orm'
import { calls } from '~/db/schema'
import type { Runtime, SessionRuntime } from '~/kit/runtime'
import type { InboundAnswer } from '~/kit/telephony'
import { pcmToBase64 } from '~/lib/audio'
import { apiError, Errors } from '~/lib/errors'
import { findNumberByE164 } from '~/domain/phone-numbers/numbers'
import { simulatedNetwork } from '~/kit/simulated-network'
import { acceptInboundCall, callerE164 } from './inbound'
import { answerOutboundCall, onOutboundStatus, outboundCtx } from './outbound'
import { MAX_CALL_S } from './quotas'
import type { SimulatedInboundCallBody } from './schemas'
import { attachMedia } from './session'

const RATE = 8000
/** Silence after each utterance: more than the session's end-of-speech window. */
const PAUSE_MS = 800
/** A caller waits at most this long (wall clock) for an answer before it hangs up. */
const ANSWER_WAIT_MS = 60_000

export interface SimulatedCall {
  conversationId: string
  status: 'in_progress' | 'failed'
  /** Settles when the caller has hung up or been hung up on. */
  done: Promise<void>
}

export async function simulateInboundCall(
  runtime: Runtime,
  call: { from: string; to: string; utterances: string[]; hangUp?: boolean },
): Promise<SimulatedCall> {
  const providerCallId = `sim_${randomUUID()}`
  const accepted = await acceptInboundCall(runtime, {
    provider: 'simulated',
    providerCallId,
    from: call.from,
    to: call.to,
  })
  const { answer } = accepted
  if (answer.kind === 'refuse')
    return { conversationId: accepted.conversationId ?? '', status: 'failed', done: Promise.resolve() }
  return {
    conversationId: answer.params.conversation_id,
    status: 'in_progress',
    done: talk(runtime, providerCallId, answer, call),
  }
}

/**
 * The far end of a connected call on the simulated network (the caller of an inbound call, the person who
 * answers an outbound one): it opens the media leg, hears the agent, says each utterance in turn and hangs
 * up after the last answer (or, with hangUp false, stays silent on the line until the agent hangs up).
 * Settles when the call is over.
 */
export function talk(
  runtime: SessionRuntime,
  providerCallId: string,
  answer: Extract<InboundAnswer, { kind: 'connect' }>,
  call: { utterances: string[]; hangUp?: boolean },
): Promise<void> {
  const conversationId = answer.params.conversation_id
  // What the caller hears: agent audio, and a mark when one answer has been sent in full.
  let heard = 0
  let hungUp = false
  let onMark: ((name: string, samples: number) => void) | null = null
  const leg = runtime.providers.telephony.openMedia({
    send(message) {
      const m = JSON.parse(message) as { event: string; pcm?: string; name?: string }
      if (m.event === 'media' && m.pcm) heard += Buffer.byteLength(m.pcm, 'base64') >> 1
      else if (m.event === 'clear') heard = 0
      else if (m.event === 'mark' && m.name) {
        const samples = heard
        heard = 0
        onMark?.(m.name, samples)
      }
    },
    close() {
      hungUp = true
      onMark?.('', 0)
    },
  })
  const host = attachMedia(runtime, leg)
  const send = (m: Record<string, unknown>) => host.receive(JSON.stringify(m))
  const silence = (ms: number) => {
    // One second per message, as a provider would batch frames.
    for (let left = Math.round((RATE * ms) / 1000); left > 0 && !hungUp; left -= RATE)
      send({ event: 'media', pcm: pcmToBase64(new Int16Array(Math.min(RATE, left))) })
  }
  /** Hears one answer: after the agent's send has returned (a network is asynchronous), silence for its
   *  length, then its mark acknowledged. */
  const hear = (name: string, samples: number) =>
    new Promise<void>((resolve) =>
      setImmediate(() => {
        if (!hungUp && name) {
          silence((samples * 1000) / RATE)
          send({ event: 'mark', name })
        }
        resolve()
      }),
    )
  /** Waits for the next complete answer and hears it. */
  const listen = () =>
    new Promise<void>((resolve) => {
      if (hungUp) return resolve()
      const timer = setTimeout(() => {
        onMark = null
        resolve()
      }, ANSWER_WAIT_MS)
      onMark = (name, samples) => {
        onMark = null
        clearTimeout(timer)
        void hear(name, samples).then(resolve)
      }
    })

  return (async () => {
    try {
      const greeting = listen()
      send({ event: 'start', call_id: providerCallId, stream_id: `st_${providerCallId}`, params: answer.params })
      await greeting
      for (const text of call.utterances) {
        if (hungUp) break
        const voice = await runtime.providers.speech.synthesize(text, {
          voice: null,
          speakingRate: 1,
          sampleRate: RATE,
        })
        const answered = listen()
        for (let i = 0; i < voice.samples.length && !hungUp; i += RATE)
          send({ event: 'media', pcm: pcmToBase64(voice.samples.subarray(i, i + RATE)) })
        silence(PAUSE_MS)
        await answered
      }
      if (call.hangUp === false) {
        // The caller stays on the line, silent, until the agent ends the call (silence timeout, time limit),
        // listening to whatever the agent says meanwhile. Paced at 200× real time, bounded by the longest call.
        onMark = (name, samples) => void hear(name, samples)
        for (let s = 0; !hungUp && s < MAX_CALL_S + 60; s++) {
          silence(1000)
          await new Promise((r) => setTimeout(r, 5))
        }
      }
      if (!hungUp) {
        // A caller does not drop the line mid-breath: a moment of silence lets the agent finish (a transfer,
        // an end-call phrase) before the caller hangs up.
        silence(1000)
        for (let i = 0; i < 30 && !hungUp; i++) await new Promise((r) => setTimeout(r, 10))
      }
      if (!hungUp) send({ event: 'stop' })
    } catch (err) {
      console.error(`[simulator] ${conversationId}: ${err instanceof Error ? err.message : err}`)
      host.closed()
    }
  })()
}

/** Who answers an outbound call on the simulated network, by the number's last four digits. */
export function simulatedCallee(to: string): 'human' | 'no_answer' | 'failed' | 'machine' | 'rings' {
  if (to.endsWith('0000')) return 'no_answer'
  if (to.endsWith('9999')) return 'failed'
  if (to.endsWith('8888')) return 'machine'
  if (to.endsWith('7777')) return 'rings'
  return 'human'
}

/** What the person who answers an outbound call on the simulated network says before hanging up (unless
 *  the call's variables carry simulated_reply). */
export const CALLEE_REPLY = 'Yes, that works for me. Thank you, goodbye.'
const RING_MS = 30
/** A `rings` number rings this long, then reports no answer. */
const LONG_RING_MS = 20_000

/** Plays the people at the numbers this process dials on the simulated network. */
export function startSimulatedNetwork(runtime: Runtime): () => void {
  const ctx = outboundCtx(runtime)
  const hungUp = new Set<string>()
  const offHangUp = simulatedNetwork.onHangUp((id) => {
    hungUp.add(id)
    setTimeout(() => hungUp.delete(id), LONG_RING_MS + 5_000).unref()
  })
  const offDial = simulatedNetwork.onDial((dial) => {
    const kind = simulatedCallee(dial.to)
    const run = async () => {
      await new Promise((r) => setTimeout(r, kind === 'rings' ? LONG_RING_MS : RING_MS).unref())
      if (hungUp.has(dial.providerCallId)) return
      if (kind !== 'human' && kind !== 'machine') {
        await onOutboundStatus(ctx, dial.callId, { state: kind === 'failed' ? 'failed' : 'no_answer' })
        return
      }
      const answer = await answerOutboundCall(runtime, {
        callId: dial.callId,
        providerCallId: dial.providerCallId,
        answeredBy: kind,
      })
      if (answer.kind !== 'connect') return
      // What the callee says: the call's variable simulated_reply when it has one (offline tests of a
      // profile's script and capabilities), else CALLEE_REPLY.
      const [placed] = await runtime.database.db
        .select({ variables: calls.variables })
        .from(calls)
        .where(eq(calls.id, dial.callId))
      const reply = placed?.variables?.simulated_reply?.trim().slice(0, 1_000) || CALLEE_REPLY
      const done = talk(
        runtime,
        dial.providerCallId,
        answer,
        kind === 'machine' ? { utterances: [], hangUp: false } : { utterances: [reply] },
      )
      simulatedCalls.set(answer.params.conversation_id, done)
      try {
        await done
      } finally {
        simulatedCalls.delete(answer.params.conversation_id)
      }
      await onOutboundStatus(ctx, dial.callId, { state: 'completed' })
    }
    run().catch((err) => console.error(`[simulator] ${dial.callId}: ${err instanceof Error ? err.message : err}`))
  })
  return () => {
    offDial()
    offHangUp()
  }
}

/** Live simulated calls of this process (their promises settle when the caller is gone). */
export const simulatedCalls = new Map<string, Promise<void>>()

/** POST /simulator/inbound-calls: only on the simulated network, only to a number of the caller's account. */
export async function startSimulatedCall(
  runtime: Runtime,
  accountId: string,
  body: v.InferOutput<typeof SimulatedInboundCallBody>,
) {
  if (runtime.providers.telephony.name !== 'simulated') throw Errors.notFound('Route')
  const to = callerE164(body.to)
  if (!to) throw apiError('invalid_phone', 'to must be an E.164 number such as +14155550123.', 'to')
  const from = callerE164(body.from)
  if (!from) throw apiError('invalid_phone', 'from must be an E.164 number such as +14155550123.', 'from')
  const number = await findNumberByE164(runtime.database.db, to)
  if (!number || number.accountId !== accountId) throw Errors.notFound('Phone number')
  const call = await simulateInboundCall(runtime, { from, to, utterances: body.utterances, hangUp: body.hang_up })
  if (call.status === 'in_progress') {
    simulatedCalls.set(call.conversationId, call.done)
    void call.done.finally(() => simulatedCalls.delete(call.conversationId))
  }
  return { conversation_id: call.conversationId, status: call.status }
}
