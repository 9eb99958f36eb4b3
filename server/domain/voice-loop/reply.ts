// One spoken answer, streamed end to end: the engine's text is cut into sentences as it is written, each
// sentence goes to speech synthesis as soon as it is complete (the next one is synthesized while the one
// before plays), and audio is sent to the caller as synthesis yields it. Tool calls run inside the same
// answer. One AbortSignal (the call's, joined with the reply's own) stops the engine and every synthesis in
// flight; capability runs are never cancelled, so an order placed is always recorded. When it is over, the
// reply says what the caller actually heard: an interrupted sentence counts only for the words that played.
import { streamAnswer, type ChatMessage, type ToolCall } from '~/kit/chat-engine'
import type { SessionRuntime } from '~/kit/runtime'
import { synthesisStream, type SynthesisOptions } from '~/kit/speech'
import { runToolCall, type Assembled, type ToolRun } from '~/domain/conversations/messages'
import type { ConversationRow } from '~/domain/conversations/chat-schemas'
import type { Playout } from './playout'
import { SentenceSplitter } from './sentences'

/** Speech synthesis of one piece is bounded. */
export const SPEECH_TIMEOUT_MS = 20_000
/** Pieces synthesized ahead of the one playing. */
const LOOKAHEAD = 2
/** Beyond twice its audio's length, an answer no leg reports as played is taken as played. */
const PLAYBACK_SLACK_MS = 10_000
/** An answer is spoken up to this many characters; a runaway engine is stopped there. */
const MAX_SPOKEN_CHARS = 4_000

export type Interruption = 'barge_in' | 'resumed' | 'hang_up'

/** Wall-clock moments (performance.now()) of the answer's first steps, for its latency breakdown. */
export interface ReplyTimings {
  engineStart: number | null
  firstToken: number | null
  ttsRequest: number | null
  ttsFirstByte: number | null
  firstAudio: number | null
}

export interface ReplyOutcome {
  /** What the caller heard (the whole answer unless it was interrupted). */
  heard: string
  /** The caller's clock (samples) when its first audio was sent, and how many samples of it played. */
  audio: { clock: number; samples: number } | null
  unanswered: boolean
  toolRuns: ToolRun[]
  usage: { input: number; output: number }
  model: string
  interrupted: Interruption | null
  /** The engine failed and the fallback line was said instead of (or after) what it had written. */
  failed: boolean
  timings: ReplyTimings
}

export type ReplySource =
  /** The engine answers the assembled turn of this conversation… */
  | { turn: Assembled; conv: ConversationRow }
  /** …or the host says this line itself (one piece, no engine). */
  | { line: string }

export interface ReplyDeps {
  runtime: SessionRuntime
  playout: Playout
  /** The caller's clock (samples received). */
  clock(): number
  synth: Omit<SynthesisOptions, 'signal'>
  /** The call's signal: a hang-up stops everything. */
  callSignal: AbortSignal
  /** Said when the engine fails. */
  fallbackLine: string
  /** Told of each tool run as soon as it ends (a transfer decides how the call ends). */
  onToolRun?(run: ToolRun): void
  /** Told the answer's whole text once it is known (captions), before it has finished playing. */
  onText?(text: string): void
  /** Said instead of the engine's own words when it says up front that it cannot answer (fallback_message). */
  unansweredLine?: string | null
  /** After the tools ran: a line to say instead of the engine's answer to their results (a handoff), or null. */
  afterTools?(runs: ToolRun[]): string | null
  /** Said after a whole answer (collect_identity's request), not after a failure or a replaced answer. */
  trailingLine?: string | null
  log(message: string): void
}

interface Piece {
  text: string
  /** Playout position of its first sample; -1 until it starts playing. */
  start: number
  samples: number
  chunks: ChunkQueue | null
}

export class Reply {
  private controller = new AbortController()
  readonly signal: AbortSignal
  private pieces: Piece[] = []
  private interruptedBy: Interruption | null = null
  private toolsStarted = false
  private spokenChars = 0
  readonly timings: ReplyTimings = {
    engineStart: null,
    firstToken: null,
    ttsRequest: null,
    ttsFirstByte: null,
    firstAudio: null,
  }

  constructor(private deps: ReplyDeps) {
    this.signal = AbortSignal.any([deps.callSignal, this.controller.signal])
  }

  /** Some of it has been sent to the caller. */
  get audible() {
    return this.timings.firstAudio !== null
  }

  /** A tool has started: the answer now has effects, so it is finished and stored even if the caller talks. */
  get committed() {
    return this.toolsStarted
  }

  interrupt(reason: Interruption) {
    if (this.interruptedBy) return
    this.interruptedBy = reason
    this.controller.abort(new Error(`reply interrupted: ${reason}`))
  }

  private get stopped() {
    return this.signal.aborted
  }

  /**
   * Says the answer. `untilPlayed` (default): resolves once the caller has heard it all or it was interrupted;
   * otherwise once it has all been sent (a host line, counted as heard in full).
   */
  async run(source: ReplySource, opts: { untilPlayed?: boolean } = {}): Promise<ReplyOutcome> {
    const untilPlayed = opts.untilPlayed ?? true
    const splitter = new SentenceSplitter()
    const player = this.play()
    let failed = false
    if ('turn' in source) {
      try {
        await this.think(source.turn, source.conv, (text) => {
          for (const piece of splitter.push(text)) this.add(piece)
        })
        for (const piece of splitter.flush()) this.add(piece)
      } catch (err) {
        if (!this.stopped) {
          failed = true
          this.deps.log(`the engine failed mid-answer: ${err instanceof Error ? err.message : err}`)
          for (const piece of splitter.flushComplete()) this.add(piece)
        }
      }
      if (failed) this.add(this.deps.fallbackLine)
      else if (!this.replacedBy && this.deps.trailingLine && !this.stopped) this.add(this.deps.trailingLine)
    } else this.add(source.line)
    this.add(null)
    const written = this.pieces.map((p) => p.text).filter(Boolean)
    if (written.length && !this.stopped) this.deps.onText?.(written.join(' '))
    await player
    if (!this.stopped) {
      const { playout } = this.deps
      playout.mark()
      // Playback runs on the caller's clock; a leg that stops sending audio and never echoes the mark must
      // not hold the turn (and the call's timers) for ever: twice the audio left, plus slack, on the wall clock.
      let timer: NodeJS.Timeout | undefined
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ((playout.remaining * 2) / this.deps.synth.sampleRate) * 1000 + PLAYBACK_SLACK_MS)
      })
      if (untilPlayed) await Promise.race([playout.whenQuiet(), aborted(this.signal), bound])
      clearTimeout(timer)
    }
    if (!this.interruptedBy && this.deps.callSignal.aborted) this.interruptedBy = 'hang_up'
    return {
      ...this.heard(untilPlayed ? this.deps.playout.heard : Number.POSITIVE_INFINITY),
      unanswered: this.unanswered || failed,
      toolRuns: this.toolRuns,
      usage: this.usage,
      model: this.model,
      failed,
      interrupted: this.interruptedBy,
      timings: this.timings,
    }
  }

  // What the engine did, kept as it happens: tools that ran before an interruption are still recorded.
  private toolRuns: ToolRun[] = []
  private usage = { input: 0, output: 0 }
  private unanswered = false
  private model = 'scripted'

  /** The engine's answer, round by round; text goes to `onText` as it comes. One round of tools, as in chat. */
  private async think(turn: Assembled, conv: ConversationRow, onText: (text: string) => void) {
    const { runtime } = this.deps
    const { agent, tools, messages, request } = turn
    this.timings.engineStart = performance.now()
    const round = async (history: ChatMessage[]) => {
      let text = ''
      const calls: ToolCall[] = []
      const deltas = streamAnswer(runtime.providers.chat, { ...request, messages: history, signal: this.signal })
      for await (const delta of deltas) {
        this.timings.firstToken ??= performance.now()
        if (delta.type === 'unanswered') {
          this.unanswered = true
          if (this.deps.unansweredLine && !this.replacedBy) this.replaceWith(this.deps.unansweredLine)
        } else if (delta.type === 'text') {
          if (this.replacedBy || this.spokenChars >= MAX_SPOKEN_CHARS) continue
          const part = delta.text.slice(0, MAX_SPOKEN_CHARS - this.spokenChars)
          this.spokenChars += part.length
          text += part
          onText(part)
        } else if (delta.type === 'tool_call') calls.push(delta.call)
        else {
          this.usage.input += delta.usage.input
          this.usage.output += delta.usage.output
          this.unanswered = delta.unanswered
          this.model = delta.model
        }
      }
      return { text, calls }
    }
    const first = await round(messages)
    if (!first.calls.length) return
    this.toolsStarted = true
    const results: ChatMessage[] = []
    for (const call of first.calls) {
      const run = await runToolCall(runtime, conv, agent, tools, call)
      this.toolRuns.push(run)
      this.deps.onToolRun?.(run)
      results.push({ role: 'tool', name: call.name, content: run.result.message })
    }
    this.signal.throwIfAborted()
    // The answer after a tool is built from its result: not a knowledge gap.
    this.unanswered = false
    const line = this.deps.afterTools?.(this.toolRuns)
    if (line) this.replaceWith(line)
    else await round([...messages, { role: 'assistant', content: first.text }, ...results])
  }

  /** A line the host says at once instead of the engine's (further) words. */
  private replacedBy: string | null = null
  private replaceWith(line: string) {
    this.replacedBy = line
    this.add(line)
  }

  /** Queues a piece to say (null: nothing more will come). */
  private add(text: string | null) {
    if (text === null) {
      this.pieces.push({ text: '', start: -1, samples: 0, chunks: null })
      this.wakePlayer?.()
      return
    }
    const trimmed = text.trim()
    if (!trimmed) return
    this.pieces.push({ text: trimmed, start: -1, samples: 0, chunks: null })
    this.synthesizeAhead()
    this.wakePlayer?.()
  }

  private playing = 0
  private firstAudioClock = 0
  private wakePlayer: (() => void) | null = null

  /** Starts synthesis of the pieces within LOOKAHEAD of the one playing. */
  private synthesizeAhead() {
    for (let i = this.playing; i < this.pieces.length && i <= this.playing + LOOKAHEAD; i++) {
      const piece = this.pieces[i]
      if (piece.chunks || !piece.text) continue
      piece.chunks = this.synthesize(piece.text)
    }
  }

  private synthesize(text: string): ChunkQueue {
    const queue = new ChunkQueue()
    const { runtime, synth } = this.deps
    const signal = AbortSignal.any([this.signal, AbortSignal.timeout(SPEECH_TIMEOUT_MS)])
    const first = this.timings.ttsRequest === null
    if (first) this.timings.ttsRequest = performance.now()
    void (async () => {
      try {
        for await (const chunk of synthesisStream(runtime.providers.tts, text, { ...synth, signal })) {
          if (first) this.timings.ttsFirstByte ??= performance.now()
          queue.push(chunk)
        }
        queue.end()
      } catch (err) {
        queue.fail(err)
      }
    })()
    return queue
  }

  /** Sends the pieces' audio in order, each as its synthesis yields it. */
  private async play() {
    const { playout } = this.deps
    for (;;) {
      while (this.playing >= this.pieces.length) await new Promise<void>((r) => (this.wakePlayer = r))
      this.wakePlayer = null
      const piece = this.pieces[this.playing]
      if (!piece.text || this.stopped) return
      this.synthesizeAhead()
      try {
        for await (const chunk of piece.chunks!) {
          if (this.stopped) return
          if (piece.start < 0) piece.start = playout.position
          if (this.timings.firstAudio === null) {
            this.timings.firstAudio = performance.now()
            this.firstAudioClock = this.deps.clock()
          }
          playout.play(chunk)
          piece.samples += chunk.length
        }
      } catch (err) {
        if (this.stopped) return
        // A piece that cannot be synthesized is skipped: the rest of the answer is still worth saying.
        this.deps.log(`speech synthesis failed: ${err instanceof Error ? err.message : err}`)
      }
      this.playing++
    }
  }

  /** The words the caller heard (the playout had played up to `played`), and how much of its audio. */
  private heard(played: number): Pick<ReplyOutcome, 'heard' | 'audio'> {
    const words: string[] = []
    let start = -1
    let samples = 0
    for (const piece of this.pieces) {
      if (piece.start < 0 || !piece.samples) continue
      const heard = Math.max(0, Math.min(piece.samples, played - piece.start))
      if (!heard) break
      if (start < 0) start = piece.start
      samples = piece.start + heard - start
      if (heard >= piece.samples) {
        words.push(piece.text)
        continue
      }
      // Cut short: the words in proportion to the audio that played, whole words only.
      const all = piece.text.split(/\s+/)
      const n = Math.floor((all.length * heard) / piece.samples)
      if (n > 0) words.push(all.slice(0, n).join(' '))
      break
    }
    return { heard: words.join(' '), audio: start < 0 ? null : { clock: this.firstAudioClock, samples } }
  }
}

/** Chunks of one synthesis, read in order while they are still being produced. */
class ChunkQueue {
  private items: Int16Array[] = []
  private done = false
  private error: unknown = null
  private waiter: (() => void) | null = null

  push(chunk: Int16Array) {
    this.items.push(chunk)
    this.wake()
  }

  end() {
    this.done = true
    this.wake()
  }

  fail(err: unknown) {
    this.error = err ?? new Error('synthesis failed')
    this.done = true
    this.wake()
  }

  private wake() {
    const w = this.waiter
    this.waiter = null
    w?.()
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Int16Array> {
    for (;;) {
      if (this.items.length) yield this.items.shift()!
      else if (this.error) throw this.error
      else if (this.done) return
      else await new Promise<void>((r) => (this.waiter = r))
    }
  }
}

const aborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve()
    signal.addEventListener('abort', () => resolve(), { once: true })
  })
