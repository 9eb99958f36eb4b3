// The voice session loop, shared by every telephony provider and by browser voice chat. It streams end to
// end (decisions "Real-time voice"): the caller's audio is segmented on the caller's clock (voice-loop/
// listen.ts), transcribed (voice-loop/transcribe.ts: live, or speculatively before the end of speech), and
// answered by a Reply (voice-loop/reply.ts) that speaks the first sentence while the engine still writes the
// rest. It honours barge-in, end_of_speech_ms, silence_timeout_s, max_call_duration_s and end_call_phrases,
// runs the agent's capabilities (transfer_call through the provider), puts a caller who opts out on the
// do-not-call list, records both sides when record_calls is on, and ends the conversation with its duration,
// usage and summary job.
//
// Time is the caller's audio: every offset is the number of caller samples received so far, so the
// transcript, the recording and the timers agree whatever the network does, and a simulated call runs
// faster than real time with the same result. Agent audio "plays" on that clock too (voice-loop/playout.ts),
// and a provider's mark echo ends it early when it reports playback itself.
import { observeChatTurn, observeVoiceTurn } from '~/kit/metrics'
import type { Capability } from '~/kit/capability'
import type { Runtime, SessionRuntime } from '~/kit/runtime'
import type { MediaLeg } from '~/kit/telephony'
import { activeContext, recordedSpan } from '~/kit/tracing'
import type { LatencyBreakdown } from '~/db/schema'
import { calls, conversations, promptVersions } from '~/db/schema'
import { and, eq } from 'drizzle-orm'
import { agentLanguage as languageOf, loadAgent, type AgentRow } from '~/domain/agents/agents'

/** The language the call is heard and spoken in: the agent's voice_locale, else its default_language. */
const speechLanguage = (agent: AgentRow | null) => agent?.voiceLocale ?? languageOf(agent)
import {
  assembleTurn,
  asksIdentity,
  chatTools,
  claimTurn,
  handoffOf,
  ownSetting,
  releaseTurn,
  persistTurn,
  runToolCall,
  TRANSFER_TOOL,
  type Assembled,
  type ToolRun,
} from '~/domain/conversations/messages'
import {
  ASK_IDENTITY,
  escalationMessage,
  fallbackMessage,
  smallTalkOf,
  wantsPerson,
} from '~/domain/conversations/behaviour'
import { escalate } from '~/domain/conversations/escalation'
import type { ConversationRow } from '~/domain/conversations/chat-schemas'
import { resolveGreeting } from '~/domain/conversations/create'
import { recentCallsFor } from '~/domain/conversations/import'
import { END_OF_SPEECH, Listener, type Utterance } from '~/domain/voice-loop/listen'
import { Playout } from '~/domain/voice-loop/playout'
import { Reply, type ReplyDeps, type ReplyOutcome } from '~/domain/voice-loop/reply'
import { MAX_TEXT, openTranscriber, speculateAfterMs, type Transcriber } from '~/domain/voice-loop/transcribe'
import { verifyMediaToken } from './inbound'
import { addOptOut, isOptOut } from './dnc'
import { scriptOf, type CallScript } from './calls'
import { finishCall, writeLine, type EndReason } from './finish'
import { CallRecorder, recordingPool } from './recording'
import { transferStatusUrl } from './transfer'
import { INSTANCE_ID } from './instance'
import { WALL_GRACE_MS, wallCeilingS } from './ceiling'

const FRAME_MS = 20
const DEFAULT_SILENCE_TIMEOUT_S = 20
const DEFAULT_MAX_CALL_S = 1_800

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

/** The agent's end_of_speech_ms (decisions "Real-time voice"), or the default. */
export function endOfSpeechMs(agent: Pick<AgentRow, 'settings'> | null): number {
  const v = agent?.settings?.end_of_speech_ms
  return typeof v === 'number' && v >= END_OF_SPEECH.min && v <= END_OF_SPEECH.max ? v : END_OF_SPEECH.default
}

/** Live sessions of this process, by conversation id (tests and shutdown read it). */
export const liveSessions = new Map<string, VoiceSession>()

/** The host side of a media leg: decodes its messages and starts the session on `start`. */
export function attachMedia(runtime: SessionRuntime, leg: MediaLeg): MediaSessionHandle {
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

/** An utterance whose words are on their way, with the moments its end was decided. */
interface Heard {
  u: Utterance
  text: Promise<string>
  /** performance.now() when the end of speech was decided. */
  endpointAt: number
}

/** Words of an answer that was dropped because the caller went on talking: they open the next turn. */
interface Carried {
  text: string
  startSample: number
}

export class VoiceSession {
  readonly rate: number
  private frame: Int16Array
  private framePos = 0
  /** Caller samples received: the call's clock. */
  private clock = 0
  private listener: Listener
  private transcriber: Transcriber | null = null
  private playout: Playout
  private queue: Heard[] = []
  private working = false
  private reply: Reply | null = null
  private carried: Carried | null = null
  private lastActivity = 0
  private ended = false
  private ending = false
  private conv: ConversationRow | null = null
  private agent: AgentRow | null = null
  private extraKnowledge: string | null = null
  /** An outbound call's script (its instructions, greeting, voicemail and tools replace the agent's). */
  private script: { call: CallScript; tools: Capability[] } | null = null
  /** A phone test of an agent test run: the candidate phone prompt it talks to (undefined: the active one). */
  private candidatePrompt: string | null | undefined = undefined
  private recorder: CallRecorder | null = null
  private ready: Promise<void> | null = null
  private pendingEnd: { reason: EndReason; transferTo?: string } | null = null
  /** Aborted when the call ends: transcription, the engine and synthesis in flight stop. */
  private call = new AbortController()
  /** The wall-clock ceiling (ceiling.ts), counted from start(). */
  private startedAt = 0
  private wallTimer: NodeJS.Timeout | null = null
  private hangingUp = false
  bargeIns = 0
  /** The trace of the request that opened the call (decisions "Tracing"): each turn's span is its child. */
  private traceParent = activeContext()

  constructor(
    private runtime: SessionRuntime,
    private leg: MediaLeg,
    readonly conversationId: string,
    readonly providerCallId: string,
    /** A voice chat's reserved seconds of its agent's daily voice-chat minutes (domain/widget/quotas.ts). */
    private reservedS: number | null = null,
  ) {
    this.rate = leg.sampleRate
    this.frame = new Int16Array((this.rate * FRAME_MS) / 1000)
    this.playout = new Playout(leg, null)
    // Until the agent is read: the default window, no speculation.
    this.listener = new Listener({ rate: this.rate, endOfSpeechMs: END_OF_SPEECH.default, speculateAfterMs: null })
  }

  private ms(samples: number) {
    return Math.round((samples * 1000) / this.rate)
  }

  private log(message: string) {
    console.error(`[call] ${this.conversationId} ${message}`)
  }

  start() {
    liveSessions.set(this.conversationId, this)
    this.startedAt = Date.now()
    const ready = this.begin().catch((err) => {
      this.log(`could not start: ${err instanceof Error ? err.message : err}`)
      void this.end('error')
    })
    this.ready = ready
    // Armed once the agent (and a call's script) is known: its max_call_duration_s is part of the ceiling.
    void ready.then(() => this.armWallCeiling())
  }

  /** max_call_duration_s of the call's script, else of the agent, else the default. */
  private maxCallS() {
    return numberSetting(
      this.script?.call.max_call_duration_s ?? this.agent?.settings?.max_call_duration_s,
      DEFAULT_MAX_CALL_S,
    )
  }

  /**
   * The wall-clock ceiling (ceiling.ts): the timers run on the caller's audio, so a client that stops
   * sending audio would otherwise hold the session for ever. Past it the closing line is said, and the call
   * ends WALL_GRACE_MS later whether or not that line was played.
   */
  private armWallCeiling() {
    if (this.ended) return
    const ceilingS = wallCeilingS({
      channel: this.conv?.channel ?? '',
      maxCallS: this.maxCallS(),
      voiceChatMaxS: this.runtime.config.voiceChatMaxSeconds,
      reservedS: this.reservedS,
    })
    const overAt = this.startedAt + ceilingS * 1000
    this.wallTimer = setTimeout(
      () => {
        if (this.ended) return
        void this.closeWith(LINES.maxDuration, 'max_duration')
        this.wallTimer = setTimeout(() => {
          if (this.ended) return
          this.playout.release()
          void this.hangUp({ reason: 'max_duration' })
        }, WALL_GRACE_MS)
        this.wallTimer.unref?.()
      },
      Math.max(0, overAt - Date.now()),
    )
    this.wallTimer.unref?.()
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
    if (conv.testRunId) this.candidatePrompt = await candidatePhonePrompt(database, conv)
    if (agent.settings?.record_calls === true) {
      this.recorder = new CallRecorder(this.rate, recordingPool(this.runtime.config), (m) => this.log(m))
      this.playout = new Playout(this.leg, this.recorder)
    }
    const eos = endOfSpeechMs(agent)
    const stt = this.runtime.providers.stt
    this.listener = new Listener({ rate: this.rate, endOfSpeechMs: eos, speculateAfterMs: speculateAfterMs(stt, eos) })
    this.transcriber = openTranscriber({
      provider: stt,
      rate: this.rate,
      language: speechLanguage(agent),
      endOfSpeechMs: eos,
      signal: this.call.signal,
      onProviderEnd: () => this.providerHeardEnd(),
      log: (m) => this.log(m),
    })
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
        // An answering machine ends the call at once (hang_up is the only voicemail policy).
        if (conv.custom?.answered_by === 'machine') return void this.afterPlayback({ reason: 'voicemail' })
        if (script.greeting) return this.say(script.greeting, 'greeting')
      }
    }
    const surface = conv.channel === 'voice_chat' ? 'voice_chat' : 'phone'
    await this.say(resolveGreeting(agent, conv.identity ?? {}, { surface, language: conv.language }), 'greeting')
  }

  onEvent(event: ReturnType<MediaLeg['receive']>) {
    if (!event || this.ended) return
    switch (event.type) {
      case 'audio':
        this.onAudio(event.pcm)
        break
      case 'mark': {
        const wasTalking = this.playout.talking
        this.playout.marked(event.name)
        if (wasTalking && !this.playout.talking) this.lastActivity = this.clock
        break
      }
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
    // The agent's audio plays on the caller's clock whether or not the call is recorded.
    const wasTalking = this.playout.talking
    const agentPlayed = this.playout.tick(frame.length)
    this.recorder?.push(frame, agentPlayed)
    this.clock += frame.length
    if (wasTalking && !this.playout.talking) this.lastActivity = this.clock
    const agentTalking = this.playout.talking
    // A live transcription hears the whole call, so its own endpointing sees real pauses.
    this.transcriber?.frame(frame)
    // With barge_in off the caller cannot be heard over the agent: that speech is not an utterance.
    if (agentTalking && !this.agent?.bargeIn) {
      if (this.listener.utterance) this.dropUtterance()
      this.checkTimers()
      return
    }
    const event = this.listener.push(frame, this.clock, agentTalking)
    switch (event?.type) {
      case 'dropped':
        this.transcriber?.drop()
        break
      case 'start':
        this.transcriber?.start()
        break
      case 'confirmed':
        this.callerTalks()
        break
      case 'speculate':
        this.transcriber?.speculate(event.utterance)
        break
      case 'end':
        this.heard(event.utterance)
        break
      default:
        break
    }
    this.checkTimers()
  }

  private dropUtterance() {
    this.listener.reset()
    this.transcriber?.drop()
  }

  /**
   * The caller is really talking (BARGE_IN_MS of speech). Over the agent's audio, with barge_in: the audio
   * in flight stops and the answer keeps only what was heard. Before any of the answer was sent (the agent
   * was still thinking), the answer is dropped and its words open the next turn with what the caller adds,
   * so the caller is answered once, for everything said. An answer that has run a tool is kept.
   */
  private callerTalks() {
    const reply = this.reply
    if (this.playout.talking) {
      if (!this.agent?.bargeIn) return
      this.playout.clear()
      reply?.interrupt('barge_in')
      this.bargeIns++
      return
    }
    if (reply && !reply.audible && !reply.committed) reply.interrupt('resumed')
  }

  /** The speech provider heard the end of the utterance before our own silence timer. */
  private providerHeardEnd() {
    if (this.ended) return
    const u = this.listener.endNow()
    if (u) this.heard(u, true)
  }

  private heard(u: Utterance, byProvider = false) {
    const transcriber = this.transcriber
    this.lastActivity = this.clock
    if (!transcriber) return
    const text = transcriber.finish(u, byProvider)
    // Read by the turn; a failure is handled there, never unhandled here.
    text.catch(() => {})
    this.queue.push({ u, text, endpointAt: performance.now() })
    void this.work()
  }

  private checkTimers() {
    if (this.ending || this.working || this.listener.utterance || this.playout.talking) return
    if (this.clock >= this.maxCallS() * this.rate) return void this.closeWith(LINES.maxDuration, 'max_duration')
    const silenceS = numberSetting(this.agent?.settings?.silence_timeout_s, DEFAULT_SILENCE_TIMEOUT_S)
    if (this.clock - this.lastActivity >= silenceS * this.rate) void this.closeWith(LINES.silence, 'silence_timeout')
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

  private async turn(h: Heard) {
    const conv = this.conv
    const agent = this.agent
    if (!conv || !agent) return
    let said: string
    try {
      said = await h.text
    } catch (err) {
      if (this.ended) return
      this.log(`transcription failed: ${err instanceof Error ? err.message : err}`)
      return this.say(LINES.trouble)
    }
    const transcribedAt = performance.now()
    const carried = this.carried
    this.carried = null
    const text = joinWords(carried?.text, said)
    if (!text) return
    const startSample = carried?.startSample ?? h.u.startSample
    // The caller is already talking again (or has more queued): this turn waits to include it.
    if (this.listener.utterance?.confirmed || this.queue.length) {
      this.carried = { text, startSample }
      return
    }
    this.leg.caption?.('visitor', text)
    const visitor = { offsetMs: this.ms(startSample), durationMs: this.ms(h.u.lastVoicedSample - startSample) }
    const caller = typeof conv.identity?.phone_e164 === 'string' ? conv.identity.phone_e164 : null
    const endPhrases = Array.isArray(agent.settings?.end_call_phrases)
      ? (agent.settings.end_call_phrases as string[])
      : []

    const turnStarted = performance.now()
    const claimed = await claimTurn(this.runtime.database, conv.accountId, conv.id)
    // Ended or deleted through the API meanwhile: the caller is hung up on.
    if (!claimed) {
      this.queue = []
      this.pendingEnd = { reason: 'conversation_closed' }
      return
    }
    let written = false
    try {
      // Browser voice chat answers with the voice_chat prompt and the chat tools (no line to transfer).
      const voiceChat = conv.channel === 'voice_chat'
      const assembled = await assembleTurn(this.runtime, claimed, text, {
        surface: voiceChat ? 'voice_chat' : 'phone',
        tools: (a) => (voiceChat ? chatTools : phoneTools)(this.runtime, a),
        extraKnowledge: this.extraKnowledge,
        script: this.script ? { instructions: this.script.call.instructions, tools: this.script.tools } : null,
        prompt: this.candidatePrompt,
      })
      const optOut = !!caller && isOptOut(text)
      if (optOut) await addOptOut(this.runtime.database, conv.accountId, caller, conv.id)
      if (saysAny(text, endPhrases)) this.pendingEnd = { reason: 'end_phrase' }
      // Decided as soon as a transfer has run, so speech that arrives while the answer plays is not answered.
      const transferred = (run: ToolRun) => {
        const phone = run.call.name === TRANSFER_TOOL && run.result.ok ? run.result.record?.phone : null
        if (typeof phone === 'string') this.pendingEnd = { reason: 'transferred', transferTo: phone }
      }
      // A caller asking for a person is handed over by the host, with no engine call (decisions "Escalation").
      const person = !optOut && wantsPerson(text) ? await this.handOver(claimed.conv, assembled, transferred) : null
      const escalation = ownSetting(agent, 'escalation_message')
      const reply = this.newReply(fallbackLine(agent), transferred, {
        unansweredLine: fallbackMessage(agent),
        afterTools: (runs) => (runs.some((r) => r.call.name === TRANSFER_TOOL && r.result.ok) ? escalation : null),
        trailingLine: asksIdentity(agent, claimed.conv, assembled.messages) ? ASK_IDENTITY : null,
      })
      this.reply = reply
      const said = optOut ? { line: LINES.optOut } : person ? { line: person.line } : null
      const out = await reply.run(said ?? { turn: assembled, conv: claimed.conv })
      this.reply = null
      const toolRuns = [...(person?.toolRuns ?? []), ...out.toolRuns]
      const handoff = person?.handoff ?? handoffOf(agent, toolRuns)
      if (out.interrupted && !out.heard && !toolRuns.length) {
        if (out.interrupted === 'hang_up') {
          // The caller left before hearing any answer: their words stay in the transcript, alone.
          await writeLine(
            this.runtime.database,
            claimed.conv,
            { speaker: 'visitor', text, turnType: 'message' },
            visitor,
          )
          return
        }
        // Nothing of it was heard: the caller's words wait for the rest of what they are saying.
        this.carried = { text, startSample }
        return
      }
      if (!this.pendingEnd && saysAny(out.heard, endPhrases)) this.pendingEnd = { reason: 'end_phrase' }
      const latency = breakdown(h, transcribedAt, out)
      traceTurn(this.traceParent, conv, h, transcribedAt, out, toolRuns.length)
      await persistTurn(
        this.runtime,
        claimed.conv,
        text,
        undefined,
        assembled,
        {
          reply: {
            text: out.heard,
            toolCalls: [],
            // Small talk is never a knowledge gap.
            unanswered: out.unanswered && !smallTalkOf(text),
            usage: out.usage,
            model: out.model,
          },
          input: out.usage.input,
          output: out.usage.output,
          toolRuns,
          latencyMs: latency.latencyMs ?? 0,
          handoff,
        },
        {
          visitor,
          agent: { offsetMs: this.ms(out.audio?.clock ?? this.clock), durationMs: this.ms(out.audio?.samples ?? 0) },
          latencyMs: latency.latencyMs ?? 0,
          breakdown: latency.breakdown,
        },
      )
      written = true
      if (latency.latencyMs !== null) this.latencies.push(latency.latencyMs)
      observeVoiceTurn({ ...stagesOf(latency.breakdown), first_audio: latency.latencyMs })
      observeChatTurn(
        conv.channel === 'voice_chat' ? 'voice_chat' : 'phone',
        this.runtime.providers.chat.name,
        (performance.now() - turnStarted) / 1000,
      )
      // A test call's handoff is read by its run from the turn: no event, no mail.
      if (handoff && !conv.testRunId)
        await escalate(this.runtime, claimed.conv, agent, { reason: handoff.reason, visitorText: text }).catch((err) =>
          this.log(`escalation not recorded: ${err instanceof Error ? err.message : err}`),
        )
    } catch (err) {
      this.log(`turn failed: ${err instanceof Error ? err.message : err}`)
      if (!written) await this.say(LINES.trouble)
    } finally {
      this.reply = null
      if (!written) await releaseTurn(this.runtime.database, claimed.conv.id)
    }
  }

  /**
   * A caller who asks for a person: on a phone call with transfer_call and someone in its directory, the call
   * goes to the directory's first entry (outside business hours the tool refuses and its message is said);
   * otherwise, and in voice chat, the agent says the escalation message. Either way the turn is a handoff.
   */
  private async handOver(conv: ConversationRow, turn: Assembled, transferred: (run: ToolRun) => void) {
    const agent = turn.agent
    const handoff = { reason: 'The caller asked for a person.' }
    const destination = conv.channel === 'voice_chat' ? null : firstTransferDestination(agent, turn.tools)
    if (!destination) return { line: escalationMessage(agent), handoff, toolRuns: [] as ToolRun[] }
    const call = { name: TRANSFER_TOOL, arguments: { destination, reason: handoff.reason } }
    const run = await runToolCall(this.runtime, conv, agent, turn.tools, call)
    transferred(run)
    const line = run.result.ok ? (ownSetting(agent, 'escalation_message') ?? run.result.message) : run.result.message
    return { line, handoff: handoffOf(agent, [run]) ?? handoff, toolRuns: [run] }
  }

  /** End-of-speech → first agent audio frame, per turn, in this process. */
  readonly latencies: number[] = []

  /** An answer (or a host line) on this call's leg, clock, voice and signal; captions go to the leg. */
  private newReply(
    fallback: string,
    onToolRun?: (run: ToolRun) => void,
    shaping: Pick<ReplyDeps, 'unansweredLine' | 'afterTools' | 'trailingLine'> = {},
  ) {
    const agent = this.agent
    return new Reply({
      ...shaping,
      runtime: this.runtime,
      playout: this.playout,
      clock: () => this.clock,
      synth: {
        voice: agent?.voiceId ?? null,
        speakingRate: agent?.speakingRate ?? 1,
        sampleRate: this.rate,
        language: speechLanguage(agent),
      },
      callSignal: this.call.signal,
      fallbackLine: fallback,
      onToolRun,
      onText: (said) => this.leg.caption?.('agent', said),
      log: (m) => this.log(m),
    })
  }

  /** Says a line of the host's own (greeting, closing, apology) and writes it as a turn once it has been sent. */
  private async say(text: string, turnType: 'greeting' | 'answer' = 'answer') {
    const out = await this.newReply(text).run({ line: text }, { untilPlayed: false })
    // Nothing could be said (synthesis failed): the silence timeout or the caller ends the call.
    if (!out.audio || !this.conv) return
    await writeLine(
      this.runtime.database,
      this.conv,
      { speaker: 'agent', text, turnType },
      {
        offsetMs: this.ms(out.audio.clock),
        durationMs: this.ms(out.audio.samples),
      },
    ).catch((err) => this.log(`line not written: ${err}`))
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
    if (this.playout.talking) {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        this.playout.whenQuiet(),
        // A leg that stops sending audio and marks must not hold the call open.
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, 120_000)
        }),
      ])
      clearTimeout(timer)
    }
    await this.hangUp(end)
  }

  /** Hangs up (or transfers) through the provider, once, then ends the session. */
  private async hangUp(end: { reason: EndReason; transferTo?: string }) {
    if (this.ended || this.hangingUp) return
    this.hangingUp = true
    // Browser voice chat has no provider call: closing the socket is the hang-up.
    if (!this.providerCallId) return this.end(end.reason)
    const telephony = this.runtime.providers.telephony
    try {
      // The transfer leg is time-limited like the call, and its end is reported so that it is billed (transfer.ts).
      if (end.transferTo)
        await telephony.transfer(this.providerCallId, end.transferTo, {
          maxDurationS: this.maxCallS(),
          statusUrl: transferStatusUrl(this.runtime.config, telephony.name, this.conversationId),
        })
      else await telephony.hangUp(this.providerCallId)
    } catch (err) {
      this.log(`${end.reason}: provider refused: ${err instanceof Error ? err.message : err}`)
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
    if (this.wallTimer) clearTimeout(this.wallTimer)
    this.call.abort(new Error(`call ended: ${reason}`))
    this.playout.release()
    this.transcriber?.close()
    liveSessions.delete(this.conversationId)
    this.leg.ended?.(reason)
    this.leg.close()
    await this.ready
    // Turns still being written land before the conversation closes.
    const deadline = Date.now() + 30_000
    while (this.working && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    if (!this.conv) return
    try {
      // The encoder threads may still be working through the call's last chunks (mp3-pool.ts).
      const recording = this.recorder
        ? await this.recorder.finish().catch((err) => {
            this.log(`recording lost: ${err instanceof Error ? err.message : err}`)
            return null
          })
        : null
      await finishCall(this.runtime, this.conv, { reason, durationS: Math.round(this.clock / this.rate), recording })
    } catch (err) {
      this.log(`could not be closed: ${err instanceof Error ? err.message : err}`)
    }
  }
}

/** A test call's candidate prompt (decisions "Test runs"): the body of the phone prompt version its run
 *  talks to, else undefined (the agent's active phone prompt). */
async function candidatePhonePrompt(database: SessionRuntime['database'], conv: ConversationRow) {
  const id = conv.custom?.prompt_version_id
  if (typeof id !== 'string' || !conv.agentId) return undefined
  const [pv] = await database.db
    .select({ type: promptVersions.type, body: promptVersions.body })
    .from(promptVersions)
    .where(and(eq(promptVersions.id, id), eq(promptVersions.agentId, conv.agentId)))
  return pv?.type === 'phone' ? pv.body : undefined
}

/**
 * A turn's words with those carried from an answer the caller talked over before it started. Bounded like one
 * utterance: a caller who keeps going on never grows the turn past MAX_TEXT (the latest words are kept).
 */
function joinWords(carried: string | undefined, said: string): string {
  const text = [carried, said].filter(Boolean).join(' ')
  return text.length <= MAX_TEXT ? text : text.slice(text.length - MAX_TEXT).replace(/^\S*\s+/, '')
}

/** The first name of the agent's transfer directory, when the call may use transfer_call. */
function firstTransferDestination(agent: AgentRow, tools: Capability[]): string | null {
  if (!tools.some((c) => c.name === TRANSFER_TOOL)) return null
  const dir = agent.capabilitySettings?.transfer_directory
  const first = Array.isArray(dir) ? dir[0]?.name : dir && typeof dir === 'object' ? Object.keys(dir)[0] : null
  return typeof first === 'string' && first.trim() ? first : null
}

/** What the agent says when its engine fails: the agent's fallback_message, else the host's apology. */
function fallbackLine(agent: AgentRow): string {
  const own = agent.settings?.fallback_message
  return typeof own === 'string' && own.trim() ? own : LINES.trouble
}

const round = (ms: number | null) => (ms === null ? null : Math.max(0, Math.round(ms)))
const between = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a)

/** latency_ms (end of the caller's speech → first audio frame sent) and where it went. */
function breakdown(h: Heard, transcribedAt: number, out: ReplyOutcome) {
  const t = out.timings
  const b: LatencyBreakdown = {
    endpoint_ms: round(h.endpointAt - h.u.lastVoicedWall),
    stt_ms: round(transcribedAt - h.endpointAt),
    llm_first_token_ms: round(between(t.engineStart, t.firstToken)),
    tts_first_byte_ms: round(between(t.ttsRequest, t.ttsFirstByte)),
  }
  return { latencyMs: round(between(h.u.lastVoicedWall, t.firstAudio)), breakdown: b }
}

/** The breakdown's stages under their metric names (svc_voice_turn_latency_seconds{stage}). */
const stagesOf = (b: LatencyBreakdown) => ({
  endpoint: b.endpoint_ms,
  stt: b.stt_ms,
  llm_first_token: b.llm_first_token_ms,
  tts_first_byte: b.tts_first_byte_ms,
})

/**
 * The voice turn as spans (decisions "Tracing"), from the times breakdown() reads: the turn from the end of
 * the caller's speech to the first audio sent, and under it each stage of latency_breakdown.
 */
function traceTurn(
  parent: ReturnType<typeof activeContext>,
  conv: ConversationRow,
  h: Heard,
  transcribedAt: number,
  out: ReplyOutcome,
  toolCalls: number,
) {
  const t = out.timings
  const end = t.firstAudio ?? performance.now()
  const turn = recordedSpan(
    'voice.turn',
    {
      'svc.conversation.id': conv.id,
      'svc.channel': conv.channel,
      'svc.voice.latency_ms': round(between(h.u.lastVoicedWall, t.firstAudio)),
      'svc.turn.tool_calls': toolCalls,
      'svc.turn.interrupted': !!out.interrupted,
    },
    h.u.lastVoicedWall,
    end,
    parent,
  )
  const stage = (name: string, start: number | null, stop: number | null) =>
    recordedSpan(`voice.${name}`, { 'svc.voice.stage': name }, start, stop, turn)
  stage('endpoint', h.u.lastVoicedWall, h.endpointAt)
  stage('stt', h.endpointAt, transcribedAt)
  stage('llm_first_token', t.engineStart, t.firstToken)
  stage('tts_first_byte', t.ttsRequest, t.ttsFirstByte)
  stage('first_audio', t.ttsFirstByte, t.firstAudio)
}

const numberSetting = (value: unknown, fallback: number) =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback
