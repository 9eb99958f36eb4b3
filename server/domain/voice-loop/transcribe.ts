// The caller's words of one utterance, two ways. A provider with live transcription hears the call as it
// goes (every caller frame is streamed to it) and may end the utterance itself; at our own end of speech it
// is asked to finalize what it holds. A provider without it gets each utterance whole after the end of
// speech; to hide that wait, the utterance is sent speculatively once its trailing silence passes the
// speculation point, and the answer is used only if the caller said nothing more before the end of speech
// (otherwise the whole utterance is transcribed again: a caller who goes on talking loses no words).
import type { LiveTranscription, SpeechProvider, TranscribingProvider, TranscriptEvent } from '~/kit/speech'
import { audioOf, type Utterance } from './listen'

/** Recognition of one utterance is bounded. */
export const TRANSCRIBE_TIMEOUT_MS = 20_000
/** Utterance text is cut before any pattern runs on it. */
export const MAX_TEXT = 2_000

export interface Transcriber {
  /** A caller frame the loop hears (live providers stream it). */
  frame(pcm: Int16Array): void
  /** An utterance started: words from now on are its. */
  start(): void
  /** The listener's speculation point was reached. */
  speculate(u: Utterance): void
  /** End of speech (ours, or the provider's when `byProvider`): the utterance's words. */
  finish(u: Utterance, byProvider: boolean): Promise<string>
  /** The utterance in progress was dropped (noise, or speech the loop does not answer). */
  drop(): void
  close(): void
}

export interface TranscriberOptions {
  provider: TranscribingProvider
  rate: number
  language: string | null
  endOfSpeechMs: number
  /** The call's signal: a hang-up stops recognition in flight. */
  signal: AbortSignal
  /** The provider's own endpointing says the caller stopped. */
  onProviderEnd(): void
  log(message: string): void
}

export function openTranscriber(opts: TranscriberOptions): Transcriber {
  return opts.provider.listen ? new LiveTranscriber(opts) : new BatchTranscriber(opts)
}

// How long recognition takes, per provider (a moving average of this process's calls): the speculation
// point is that much before the end of speech, so the words are ready when the silence ends.
const recognitionMs = new Map<string, number>()

/** Silence after which to transcribe speculatively, or null when it would gain nothing. */
export function speculateAfterMs(provider: SpeechProvider, endOfSpeechMs: number): number | null {
  if (provider.listen) return null
  // Unknown yet: half the window. At most half the window early, so a pause mid-sentence rarely costs a request.
  const lead = Math.min(recognitionMs.get(provider.name) ?? endOfSpeechMs / 2, endOfSpeechMs / 2)
  return lead < 20 ? null : Math.round(endOfSpeechMs - lead)
}

const clean = (text: string) => text.trim().slice(0, MAX_TEXT)

class BatchTranscriber implements Transcriber {
  private speculation: { lastVoiced: number; controller: AbortController; text: Promise<string> } | null = null

  constructor(private opts: TranscriberOptions) {}

  frame() {}
  start() {}

  private transcribe(audio: Int16Array, controller = new AbortController()): Promise<string> {
    const { provider, rate, language, signal } = this.opts
    const started = performance.now()
    const both = AbortSignal.any([signal, controller.signal, AbortSignal.timeout(TRANSCRIBE_TIMEOUT_MS)])
    return provider.transcribe({ samples: audio, sampleRate: rate }, { language, signal: both }).then((heard) => {
      const took = performance.now() - started
      const before = recognitionMs.get(provider.name)
      recognitionMs.set(provider.name, before === undefined ? took : before * 0.8 + took * 0.2)
      return clean(heard.text)
    })
  }

  speculate(u: Utterance) {
    this.drop()
    const controller = new AbortController()
    const text = this.transcribe(audioOf(u), controller)
    // Nobody may ever read it (the caller went on talking): its failure is not an unhandled rejection.
    text.catch(() => {})
    this.speculation = { lastVoiced: u.lastVoicedSample, controller, text }
  }

  async finish(u: Utterance): Promise<string> {
    const s = this.speculation
    this.speculation = null
    // The speculation heard everything the caller said: nothing was voiced after it started.
    if (s && s.lastVoiced === u.lastVoicedSample) {
      try {
        return await s.text
      } catch (err) {
        if (this.opts.signal.aborted) throw err
      }
    } else s?.controller.abort()
    return this.transcribe(audioOf(u))
  }

  drop() {
    this.speculation?.controller.abort()
    this.speculation = null
  }

  close() {
    this.drop()
  }
}

/** Bound on the provider's finalize answer, on top of its own. */
const FINALIZE_WAIT_MS = 2_000

class LiveTranscriber implements Transcriber {
  private session: LiveTranscription | null
  private parts: string[] = []
  private armed = false
  /** Counts utterance starts: a new one that starts while the last one is finalized stays armed. */
  private started = 0
  private fallback: BatchTranscriber | null = null

  constructor(private opts: TranscriberOptions) {
    this.session = opts.provider.listen!({
      sampleRate: opts.rate,
      language: opts.language,
      endOfSpeechMs: opts.endOfSpeechMs,
      onEvent: (e) => this.onEvent(e),
    })
  }

  private onEvent(e: TranscriptEvent) {
    if (!this.session) return
    switch (e.type) {
      case 'final':
        if (this.armed && e.text.trim()) this.parts.push(e.text.trim())
        if (e.endOfUtterance && this.armed) this.opts.onProviderEnd()
        break
      case 'utterance_end':
        if (this.armed) this.opts.onProviderEnd()
        break
      case 'error':
        // The call goes on: each utterance is then sent whole to the same provider.
        this.opts.log(`live transcription failed, utterances are transcribed whole from now on: ${e.message}`)
        this.session = null
        this.fallback = new BatchTranscriber(this.opts)
        break
      default:
        break
    }
  }

  frame(pcm: Int16Array) {
    this.session?.send(pcm)
  }

  start() {
    this.armed = true
    this.started++
  }

  speculate() {}

  async finish(u: Utterance, byProvider: boolean): Promise<string> {
    if (this.fallback) return this.fallback.finish(u)
    const started = this.started
    if (!byProvider && this.session) {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        this.session.finalize(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, FINALIZE_WAIT_MS)
        }),
      ])
      clearTimeout(timer)
    }
    const text = clean(this.parts.join(' '))
    this.parts = []
    if (this.started === started) this.armed = false
    return text
  }

  drop() {
    this.parts = []
    this.armed = false
  }

  close() {
    const s = this.session
    this.session = null
    s?.close()
  }
}
