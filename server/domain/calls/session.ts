// The voice session loop, shared by every telephony provider and by browser voice chat: caller
// audio → utterance segmentation on silence → speech to text → the chat engine with the surface's prompt,
// the calls knowledge block and (inbound) the caller's recent calls → text to speech → caller. It honours
// barge-in, silence_timeout_s, max_call_duration_s and end_call_phrases, runs the agent's capabilities
// (transfer_call through the provider), puts a caller who opts out on the do-not-call list, records both
// sides when record_calls is on, and ends the conversation with its duration, usage and summary job.
//
// Time is the caller's audio: every offset is the number of caller samples received so far, so the
// transcript, the recording and the timers agree whatever the network does, and a simulated call runs
// faster than real time with the same result. Agent audio "plays" on that clock too (the recording's second
// channel is filled from it), and a provider's mark echo ends it early when it reports playback itself.
import type { Capability } from '~/kit/capability'
import type { Runtime } from '~/kit/runtime'
import type { MediaLeg } from '~/kit/telephony'
import { rms } from '~/lib/audio'
import { calls, conversations } from '~/db/schema'
import { and, eq } from 'drizzle-orm'
import { agentLanguage as languageOf, loadAgent, type AgentRow } from '~/domain/agents/agents'
import {
  assembleTurn,
  chatTools,
  claimTurn,
  releaseTurn,
  completeWithTools,
  persistTurn,
} from '~/domain/conversations/messages'
import type { ConversationRow } from '~/domain/conversations/chat-schemas'
import { resolveGreeting } from '~/domain/conversations/create'
import { recentCallsFor } from '~/domain/conversations/import'
import { verifyMediaToken } from './inbound'
import { addOptOut, isOptOut } from './dnc'
import { scriptOf, type CallScript } from './calls'
import { finishCall, writeAgentLine, type EndReason } from './finish'
import { CallRecorder } from './recording'
import { INSTANCE_ID } from './instance'

const FRAME_MS = 20
/** RMS above which a 20 ms frame is speech (PCM16; about -38 dBFS). */
const VOICE_RMS = 400
/** Silence after speech that ends an utterance. */
const ENDPOINT_MS = 600
/** Shorter bursts are noise, not an utterance. */
const MIN_SPEECH_MS = 120
const MAX_UTTERANCE_MS = 30_000
/** Speech while the agent talks must last this long to interrupt it (barge-in). */
const BARGE_IN_MS = 200
const DEFAULT_SILENCE_TIMEOUT_S = 20
const DEFAULT_MAX_CALL_S = 1_800
/** Speech recognition and synthesis of one utterance are bounded. */
const SPEECH_TIMEOUT_MS = 20_000
/** Utterance text is cut before any pattern runs on it. */
const MAX_TEXT = 2_000

export const LINES = {
  silence: "I haven't heard anything for a while, so I'll end the call now. Goodbye.",
  maxDuration: 'We have reached the time limit for this call. Thank you for calling, goodbye.',
  goodbye: 'Thank you for calling. Goodbye.',
  optOut: "Understood. We won't call this number again.",
  trouble: 'Sorry, I had trouble with that. Could you say it again?',
} as const

export interface MediaSessionHandle {
  receive(message: string): void
  closed(): void
}

/** Whether any phrase occurs in the text, case-insensitively (plain substring: phrases are data, not patterns). */
export function saysAny(text: string, phrases: readonly string[]): boolean {
  const t = text.toLowerCase()
  return phrases.some((p) => p.trim() && t.includes(p.trim().toLowerCase()))
}

/** The capabilities a call may use: enabled on the agent and installed (transfer_call included). */
export function phoneTools(runtime: Pick<Runtime, 'registries'>, agent: AgentRow): Capability[] {
  return agent.capabilities.map((name) => runtime.registries.capabilities.get(name)).filter((c): c is Capability => !!c)
}

/** Contract runtime rule 4: date, outcome and summary of the caller's last three calls, never the transcript. */
export function historyBlock(calls: { date: string; outcome: string | null; summary: string | null }[]): string | null {
  if (!calls.length) return null
  const lines = calls.map(
    (c) =>
      `- ${c.date.slice(0, 10)} (outcome: ${c.outcome ?? 'unknown'}): ${(c.summary ?? 'no summary').slice(0, 600)}`,
  )
  return `### Previous calls with this caller (last 30 days, newest first)\n${lines.join('\n')}`
}

function withTimeout<T>(work: (signal: AbortSignal) => Promise<T>, ms: number, what: string): Promise<T> {
  const ctl = new AbortController()
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    work(ctl.signal),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        ctl.abort()
        reject(new Error(`${what} took longer than ${ms} ms`))
      }, ms)
    }),
  ]).finally(() => clearTimeout(timer))
}

/** Live sessions of this process, by conversation id (tests and shutdown read it). */
export const liveSessions = new Map<string, VoiceSession>()

/** The host side of a media leg: decodes its messages and starts the session on `start`. */
export function attachMedia(runtime: Runtime, leg: MediaLeg): MediaSessionHandle {
  let session: VoiceSession | null = null
  let refused = false
  return {
    receive(message) {
      if (refused) return
      const event = leg.receive(message)
      if (!event) return
      if (!session) {
        if (event.type !== 'start') return
        const convId = event.params.conversation_id ?? ''
        const token = event.params.token ?? ''
        if (!convId || !token || !verifyMediaToken(runtime.config.secret, convId, token)) {
          refused = true
          leg.close()
          return
        }
        session = new VoiceSession(runtime, leg, convId, event.providerCallId)
        session.start()
        return
      }
      session.onEvent(event)
    },
    closed() {
      session?.callerHungUp()
    },
  }
}

interface Utterance {
  chunks: Int16Array[]
  samples: number
  startSample: number
  lastVoicedSample: number
  voicedSamples: number
  lastVoicedWall: number
}

export class VoiceSession {
  readonly rate: number
  private frame: Int16Array
  private framePos = 0
  /** Caller samples received: the call's clock. */
  private clock = 0
  private utterance: Utterance | null = null
  private queue: Utterance[] = []
  private working = false
  /** Agent audio still to play on the clock, and the mark that ends it early. */
  private playing: { remaining: number; mark: string | null } = { remaining: 0, mark: null }
  private markSeq = 0
  private bargeRun = 0
  private lastActivity = 0
  private ended = false
  private ending = false
  private conv: ConversationRow | null = null
  private agent: AgentRow | null = null
  private extraKnowledge: string | null = null
  /** An outbound call's script (its instructions, greeting, voicemail and tools replace the agent's). */
  private script: { call: CallScript; tools: Capability[] } | null = null
  private recorder: CallRecorder | null = null
  private ready: Promise<void> | null = null
  private pendingEnd: { reason: EndReason; transferTo?: string } | null = null
  /** Resolved whenever the agent stops talking (played out, marked, or interrupted). */
  private quiet: (() => void)[] = []

  constructor(
    private runtime: Runtime,
    private leg: MediaLeg,
    readonly conversationId: string,
    readonly providerCallId: string,
  ) {
    this.rate = leg.sampleRate
    this.frame = new Int16Array((this.rate * FRAME_MS) / 1000)
  }

  private ms(samples: number) {
    return Math.round((samples * 1000) / this.rate)
  }

  start() {
    liveSessions.set(this.conversationId, this)
    this.ready = this.begin().catch((err) => {
      console.error(`[call] ${this.conversationId} could not start: ${err instanceof Error ? err.message : err}`)
      this.end('error')
    })
  }

  private async begin() {
    const { database } = this.runtime
    const [conv] = await database.db.select().from(conversations).where(eq(conversations.id, this.conversationId))
    if (!conv || conv.status !== 'in_progress' || conv.deletedAt || !conv.agentId) {
      this.ended = true
      liveSessions.delete(this.conversationId)
      this.leg.close()
      return
    }
    this.conv = conv
    // This instance holds the session now: if it dies, the others close the conversation (reconcile.ts).
    if (conv.ownerInstance !== INSTANCE_ID)
      await database.db
        .update(conversations)
        .set({ ownerInstance: INSTANCE_ID })
        .where(and(eq(conversations.id, conv.id), eq(conversations.status, 'in_progress')))
    const agent = await loadAgent(database.db, conv.accountId, conv.agentId)
    this.agent = agent
    if (agent.settings?.record_calls === true) this.recorder = new CallRecorder(this.rate)
    const caller = typeof conv.identity?.phone_e164 === 'string' ? conv.identity.phone_e164 : null
    if (caller && conv.channel === 'phone_inbound')
      this.extraKnowledge = historyBlock(
        await recentCallsFor(database, conv.accountId, caller, conv.startedAt, conv.id),
      )
    if (conv.channel === 'phone_outbound') {
      const callId = typeof conv.custom?.call_id === 'string' ? conv.custom.call_id : ''
      const [call] = await database.db.select().from(calls).where(eq(calls.id, callId))
      if (call) {
        const script = scriptOf(call)
        const tools = script.capabilities
          .map((name) => this.runtime.registries.capabilities.get(name))
          .filter((c): c is Capability => !!c && c.outbound)
        this.script = { call: script, tools }
        if (conv.custom?.answered_by === 'machine') {
          // An answering machine: the profile's message after the beep, or nothing; then hang up.
          if (script.voicemail_policy === 'leave_message' && script.voicemail_message)
            return void this.closeWith(script.voicemail_message, 'voicemail')
          return void this.afterPlayback({ reason: 'voicemail' })
        }
        if (script.greeting) return this.say(script.greeting, 'greeting')
      }
    }
    await this.say(resolveGreeting(agent, conv.identity ?? {}), 'greeting')
  }

  onEvent(event: ReturnType<MediaLeg['receive']>) {
    if (!event || this.ended) return
    switch (event.type) {
      case 'audio':
        this.onAudio(event.pcm)
        break
      case 'mark':
        // The provider reports playback itself: what is left on our clock was already heard.
        if (event.name === this.playing.mark && this.playing.remaining > 0) {
          this.playing = { remaining: 0, mark: null }
          this.recorder?.clearAgent()
          this.lastActivity = this.clock
          this.stoppedTalking()
        }
        break
      case 'stop':
        this.callerHungUp()
        break
      default:
        break
    }
  }

  private onAudio(pcm: Int16Array) {
    let i = 0
    while (i < pcm.length && !this.ended) {
      const n = Math.min(this.frame.length - this.framePos, pcm.length - i)
      this.frame.set(pcm.subarray(i, i + n), this.framePos)
      this.framePos += n
      i += n
      if (this.framePos === this.frame.length) {
        this.onFrame(this.frame)
        this.frame = new Int16Array(this.frame.length)
        this.framePos = 0
      }
    }
  }

  private onFrame(frame: Int16Array) {
    const agentWasPlaying = this.playing.remaining > 0
    this.recorder?.push(frame, this.agentSamples(frame.length))
    this.clock += frame.length
    if (agentWasPlaying && this.playing.remaining === 0) {
      this.playing.mark = null
      this.lastActivity = this.clock
      this.stoppedTalking()
    }
    const voiced = rms(frame) >= VOICE_RMS
    if (this.playing.remaining > 0) {
      // The agent is talking: only a long enough interruption counts, and only with barge_in.
      if (!this.agent?.bargeIn) return
      this.bargeRun = voiced ? this.bargeRun + frame.length : 0
      if (this.bargeRun < (this.rate * BARGE_IN_MS) / 1000) {
        if (voiced) this.collect(frame, true)
        else this.utterance = null
        return
      }
      this.leg.clear()
      this.recorder?.clearAgent()
      this.playing = { remaining: 0, mark: null }
      this.stoppedTalking()
      this.bargeRun = 0
      this.bargeIns++
    }
    this.collect(frame, voiced)
    this.checkTimers()
  }

  bargeIns = 0

  private stoppedTalking() {
    const waiting = this.quiet
    this.quiet = []
    for (const resolve of waiting) resolve()
  }

  private collect(frame: Int16Array, voiced: boolean) {
    const u = this.utterance
    if (!u) {
      if (!voiced) return
      this.utterance = {
        chunks: [frame.slice()],
        samples: frame.length,
        startSample: this.clock - frame.length,
        lastVoicedSample: this.clock,
        voicedSamples: frame.length,
        lastVoicedWall: performance.now(),
      }
      return
    }
    u.chunks.push(frame.slice())
    u.samples += frame.length
    if (voiced) {
      u.lastVoicedSample = this.clock
      u.voicedSamples += frame.length
      u.lastVoicedWall = performance.now()
    }
    const silentFor = this.clock - u.lastVoicedSample
    if (silentFor >= (this.rate * ENDPOINT_MS) / 1000 || u.samples >= (this.rate * MAX_UTTERANCE_MS) / 1000) {
      this.utterance = null
      this.lastActivity = this.clock
      if (u.voicedSamples >= (this.rate * MIN_SPEECH_MS) / 1000) {
        this.queue.push(u)
        void this.work()
      }
    }
  }

  private checkTimers() {
    if (this.ending || this.working || this.utterance || this.playing.remaining > 0) return
    const maxS = numberSetting(
      this.script?.call.max_call_duration_s ?? this.agent?.settings?.max_call_duration_s,
      DEFAULT_MAX_CALL_S,
    )
    if (this.clock >= maxS * this.rate) return void this.closeWith(LINES.maxDuration, 'max_duration')
    const silenceS = numberSetting(this.agent?.settings?.silence_timeout_s, DEFAULT_SILENCE_TIMEOUT_S)
    if (this.clock - this.lastActivity >= silenceS * this.rate) void this.closeWith(LINES.silence, 'silence_timeout')
  }

  /** Takes `n` samples of the agent's playing audio for the recording (silence when it is not talking). */
  private agentSamples(n: number): number {
    const take = Math.min(n, this.playing.remaining)
    this.playing.remaining -= take
    return take
  }

  private play(pcm: Int16Array) {
    if (this.ended || !pcm.length) return
    const mark = `a${++this.markSeq}`
    this.playing = { remaining: pcm.length, mark }
    this.recorder?.agentAudio(pcm)
    this.leg.play(pcm)
    this.leg.mark(mark)
  }

  private async synthesize(text: string): Promise<Int16Array> {
    const agent = this.agent
    const out = await withTimeout(
      (signal) =>
        this.runtime.providers.speech.synthesize(text, {
          voice: agent?.voiceId ?? null,
          speakingRate: agent?.speakingRate ?? 1,
          sampleRate: this.rate,
          language: languageOf(agent),
          signal,
        }),
      SPEECH_TIMEOUT_MS,
      'speech synthesis',
    )
    return out.samples
  }

  /** One utterance at a time, in order; the engine is never asked two things at once for one call. */
  private async work() {
    if (this.working) return
    this.working = true
    try {
      await this.ready
      // Once the agent has decided to end the call (an end phrase, a transfer), later speech is not answered.
      while (this.queue.length && !this.ended && !this.ending && !this.pendingEnd) await this.turn(this.queue.shift()!)
    } finally {
      this.working = false
    }
    if (this.pendingEnd && !this.ended) await this.afterPlayback(this.pendingEnd)
  }

  private async turn(u: Utterance) {
    const conv = this.conv
    const agent = this.agent
    if (!conv || !agent) return
    const audio = concat(u.chunks, u.samples)
    let text: string
    try {
      const heard = await withTimeout(
        (signal) =>
          this.runtime.providers.speech.transcribe(
            { samples: audio, sampleRate: this.rate },
            { language: languageOf(agent), signal },
          ),
        SPEECH_TIMEOUT_MS,
        'speech recognition',
      )
      text = heard.text.trim().slice(0, MAX_TEXT)
    } catch (err) {
      console.error(`[call] ${conv.id} transcription failed: ${err instanceof Error ? err.message : err}`)
      return this.say(LINES.trouble)
    }
    if (!text) return
    this.leg.caption?.('visitor', text)
    const visitor = { offsetMs: this.ms(u.startSample), durationMs: this.ms(u.lastVoicedSample - u.startSample) }
    const caller = typeof conv.identity?.phone_e164 === 'string' ? conv.identity.phone_e164 : null
    const endPhrases = Array.isArray(agent.settings?.end_call_phrases)
      ? (agent.settings.end_call_phrases as string[])
      : []

    const claimed = await claimTurn(this.runtime.database, conv.accountId, conv.id)
    // Ended or deleted through the API meanwhile: the caller is hung up on.
    if (!claimed) {
      this.queue = []
      this.pendingEnd = { reason: 'conversation_closed' }
      return
    }
    try {
      let reply: Awaited<ReturnType<typeof completeWithTools>>
      // Browser voice chat answers with the voice_chat prompt and the chat tools (no line to transfer).
      const voiceChat = conv.channel === 'voice_chat'
      const assembled = await assembleTurn(this.runtime, claimed, text, {
        surface: voiceChat ? 'voice_chat' : 'phone',
        tools: (a) => (voiceChat ? chatTools : phoneTools)(this.runtime, a),
        extraKnowledge: this.extraKnowledge,
        script: this.script ? { instructions: this.script.call.instructions, tools: this.script.tools } : null,
      })
      if (caller && isOptOut(text)) {
        await addOptOut(this.runtime.database, conv.accountId, caller, conv.id)
        reply = scripted(LINES.optOut)
      } else reply = await completeWithTools(this.runtime, claimed.conv, assembled)
      // Decided before the answer plays, so speech that arrives while it is written is not answered.
      const transfer = reply.toolRuns.find((r) => r.call.name === 'transfer_call' && r.result.ok)
      const phone = transfer?.result.record?.phone
      if (typeof phone === 'string') this.pendingEnd = { reason: 'transferred', transferTo: phone }
      else if (saysAny(text, endPhrases) || saysAny(reply.reply.text, endPhrases))
        this.pendingEnd = { reason: 'end_phrase' }
      const pcm = await this.synthesize(reply.reply.text)
      const agentOffset = this.clock
      this.play(pcm)
      this.leg.caption?.('agent', reply.reply.text)
      const latencyMs = Math.round(performance.now() - u.lastVoicedWall)
      this.latencies.push(latencyMs)
      await persistTurn(this.runtime, claimed.conv, text, undefined, assembled, reply, {
        visitor,
        agent: { offsetMs: this.ms(agentOffset), durationMs: this.ms(pcm.length) },
        latencyMs,
      })
    } catch (err) {
      await releaseTurn(this.runtime.database, claimed.conv.id)
      console.error(`[call] ${conv.id} turn failed: ${err instanceof Error ? err.message : err}`)
      await this.say(LINES.trouble)
    }
  }

  /** End-of-speech → first agent audio frame, per turn, in this process (for the closing note's figures). */
  readonly latencies: number[] = []

  /** Says a line of the host's own (greeting, closing, apology) and writes it as a turn. */
  private async say(text: string, turnType: 'greeting' | 'answer' = 'answer') {
    let pcm: Int16Array
    try {
      pcm = await this.synthesize(text)
    } catch (err) {
      // Nothing can be said to this caller now; the silence timeout or the caller ends the call.
      console.error(
        `[call] ${this.conversationId} speech synthesis failed: ${err instanceof Error ? err.message : err}`,
      )
      return
    }
    const offset = this.clock
    this.play(pcm)
    this.leg.caption?.('agent', text)
    if (this.conv)
      await writeAgentLine(this.runtime.database, this.conv, text, turnType, {
        offsetMs: this.ms(offset),
        durationMs: this.ms(pcm.length),
      }).catch((err) => console.error(`[call] ${this.conversationId} line not written: ${err}`))
  }

  /** Says a closing line, lets it play, then hangs up. */
  private async closeWith(line: string, reason: EndReason) {
    if (this.ending) return
    this.ending = true
    await this.say(line)
    await this.afterPlayback({ reason })
  }

  /** Waits (on the call's clock) for the agent to finish talking, then hangs up or transfers. */
  private async afterPlayback(end: { reason: EndReason; transferTo?: string }) {
    this.ending = true
    if (this.playing.remaining > 0) {
      let timer: NodeJS.Timeout | undefined
      await new Promise<void>((resolve) => {
        this.quiet.push(resolve)
        // A leg that stops sending audio and marks must not hold the call open.
        timer = setTimeout(resolve, 120_000)
      })
      clearTimeout(timer)
    }
    if (this.ended) return
    // Browser voice chat has no provider call: closing the socket is the hang-up.
    if (!this.providerCallId) return this.end(end.reason)
    const telephony = this.runtime.providers.telephony
    try {
      if (end.transferTo) await telephony.transfer(this.providerCallId, end.transferTo)
      else await telephony.hangUp(this.providerCallId)
    } catch (err) {
      console.error(
        `[call] ${this.conversationId} ${end.reason}: provider refused: ${err instanceof Error ? err.message : err}`,
      )
    }
    await this.end(end.reason)
  }

  callerHungUp() {
    void this.end('caller_hung_up')
  }

  private async end(reason: EndReason) {
    if (this.ended) return
    this.ended = true
    this.ending = true
    this.stoppedTalking()
    liveSessions.delete(this.conversationId)
    this.leg.ended?.(reason)
    this.leg.close()
    await this.ready
    // Turns still being written land before the conversation closes.
    const deadline = Date.now() + 30_000
    while (this.working && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    if (!this.conv) return
    try {
      await finishCall(this.runtime, this.conv, {
        reason,
        durationS: Math.round(this.clock / this.rate),
        recording: this.recorder?.finish() ?? null,
      })
    } catch (err) {
      console.error(`[call] ${this.conversationId} could not be closed: ${err instanceof Error ? err.message : err}`)
    }
  }
}

/** A reply the host says itself (no engine call, no tokens). */
function scripted(text: string): Awaited<ReturnType<typeof completeWithTools>> {
  return {
    reply: { text, toolCalls: [], unanswered: false, usage: { input: 0, output: 0 }, model: 'scripted' },
    input: 0,
    output: 0,
    toolRuns: [],
    latencyMs: 0,
  }
}

function concat(chunks: Int16Array[], total: number) {
  const out = new Int16Array(total)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.length
  }
  return out
}

const numberSetting = (value: unknown, fallback: number) =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback
