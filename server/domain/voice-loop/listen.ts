// The caller's side of the voice loop, frame by frame: which 20 ms frames are speech, when an utterance
// starts, when it is long enough to count as the caller really talking (barge-in), when its trailing
// silence is long enough to transcribe it speculatively, and when it ends (end_of_speech_ms of silence).
// Pure: frames and the call's clock in, events out; time is the caller's audio, so a call simulated faster
// than real time decides exactly as a real one.
import { rms } from '~/lib/audio'

/** RMS above which a 20 ms frame is speech (PCM16; about -38 dBFS). */
export const VOICE_RMS = 400
/** Shorter bursts are noise, not an utterance. */
export const MIN_SPEECH_MS = 120
/** This much speech without a break is the caller talking for real: it interrupts the agent (barge-in). */
export const BARGE_IN_MS = 200
/** No utterance is longer: past it, it ends as if the caller had paused. */
export const MAX_UTTERANCE_MS = 30_000
/** decisions "Real-time voice": end_of_speech_ms is 200–2,000, default 500. */
export const END_OF_SPEECH = { min: 200, max: 2_000, default: 500 } as const

export interface Utterance {
  chunks: Int16Array[]
  samples: number
  /** Caller clock (samples) at its first voiced frame's start, and at its last voiced frame's end. */
  startSample: number
  lastVoicedSample: number
  voicedSamples: number
  /** performance.now() when its last voiced frame arrived: the end of the caller's speech, as the caller spoke it. */
  lastVoicedWall: number
  /** Its speech reached BARGE_IN_MS without a break. */
  confirmed: boolean
}

export type ListenEvent =
  /** A voiced frame started an utterance. */
  | { type: 'start'; utterance: Utterance }
  /** The utterance in progress just became a real one (BARGE_IN_MS of unbroken speech). */
  | { type: 'confirmed'; utterance: Utterance }
  /** Its trailing silence reached the speculation point: what was said so far may be transcribed now. */
  | { type: 'speculate'; utterance: Utterance }
  /** End of speech. */
  | { type: 'end'; utterance: Utterance }
  /** A burst over the agent's audio, too short to interrupt it, was dropped. */
  | { type: 'dropped' }

export interface ListenOptions {
  rate: number
  endOfSpeechMs: number
  /** Silence after which to speculate, or null never to. Less than endOfSpeechMs to be of use. */
  speculateAfterMs: number | null
}

export class Listener {
  private current: Utterance | null = null
  private run = 0
  private speculated = false

  constructor(private opts: ListenOptions) {}

  /** The utterance being spoken (or in its trailing silence), if any. */
  get utterance(): Utterance | null {
    return this.current
  }

  private samplesOf(ms: number) {
    return (this.opts.rate * ms) / 1000
  }

  /** Forgets the utterance in progress (speech the loop decided not to hear). */
  reset() {
    this.current = null
    this.run = 0
    this.speculated = false
  }

  /**
   * One caller frame, `clock` being the call's clock after it. `strict`: the agent is talking and cannot be
   * interrupted by less than BARGE_IN_MS of unbroken speech, so a shorter burst is dropped at its first
   * silent frame instead of becoming an utterance.
   */
  push(frame: Int16Array, clock: number, strict: boolean): ListenEvent | null {
    const voiced = rms(frame) >= VOICE_RMS
    this.run = voiced ? this.run + frame.length : 0
    let u = this.current
    if (!u) {
      if (!voiced) return null
      u = {
        chunks: [],
        samples: 0,
        startSample: clock - frame.length,
        lastVoicedSample: clock,
        voicedSamples: 0,
        lastVoicedWall: performance.now(),
        confirmed: false,
      }
      this.current = u
      u.chunks.push(frame.slice())
      u.samples += frame.length
      u.voicedSamples += frame.length
      return { type: 'start', utterance: u }
    }
    if (strict && !u.confirmed && !voiced) {
      this.reset()
      return { type: 'dropped' }
    }
    u.chunks.push(frame.slice())
    u.samples += frame.length
    if (voiced) {
      u.lastVoicedSample = clock
      u.voicedSamples += frame.length
      u.lastVoicedWall = performance.now()
      this.speculated = false
      if (!u.confirmed && this.run >= this.samplesOf(BARGE_IN_MS)) {
        u.confirmed = true
        return { type: 'confirmed', utterance: u }
      }
      if (u.samples < this.samplesOf(MAX_UTTERANCE_MS)) return null
    }
    const silent = clock - u.lastVoicedSample
    if (silent >= this.samplesOf(this.opts.endOfSpeechMs) || u.samples >= this.samplesOf(MAX_UTTERANCE_MS)) {
      this.reset()
      return u.voicedSamples >= this.samplesOf(MIN_SPEECH_MS) ? { type: 'end', utterance: u } : null
    }
    const at = this.opts.speculateAfterMs
    if (
      at !== null &&
      !this.speculated &&
      silent >= this.samplesOf(at) &&
      u.voicedSamples >= this.samplesOf(MIN_SPEECH_MS)
    ) {
      this.speculated = true
      return { type: 'speculate', utterance: u }
    }
    return null
  }

  /** Ends the utterance now (the speech provider heard the end first); null when none worth answering is open. */
  endNow(): Utterance | null {
    const u = this.current
    this.reset()
    return u && u.voicedSamples >= this.samplesOf(MIN_SPEECH_MS) ? u : null
  }
}

/** An utterance's audio, contiguous. */
export function audioOf(u: Utterance, upTo = u.samples): Int16Array {
  const out = new Int16Array(Math.min(upTo, u.samples))
  let at = 0
  for (const c of u.chunks) {
    if (at >= out.length) break
    const n = Math.min(c.length, out.length - at)
    out.set(n === c.length ? c : c.subarray(0, n), at)
    at += n
  }
  return out
}
