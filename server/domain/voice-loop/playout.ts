// The agent's audio on the caller's clock. Everything sent to the leg is queued there (the provider or the
// browser plays it in real time), so what the caller has heard is counted here: samples "play" as the
// caller's own frames arrive (the call's clock), and a mark the leg echoes says everything sent before it
// has played. A barge-in clears the rest. Positions are cumulative samples sent, so a reply can ask how
// much of each of its pieces was heard, and the recording's agent channel follows the same count.
import type { MediaLeg } from '~/kit/telephony'
import type { CallRecorder } from '~/domain/calls/recording'

export class Playout {
  /** Samples sent to the leg (less any that a clear dropped), and how many of them have played. */
  private sent = 0
  private played = 0
  private markSeq = 0
  private marks = new Map<string, number>()
  private quiet: (() => void)[] = []

  constructor(
    private leg: MediaLeg,
    private recorder: CallRecorder | null,
  ) {}

  /** Where the next sample sent will be: the start of a piece about to play. */
  get position() {
    return this.sent
  }

  get heard() {
    return this.played
  }

  /** Agent audio still to play on the caller's side. */
  get remaining() {
    return this.sent - this.played
  }

  get talking() {
    return this.sent > this.played
  }

  play(pcm: Int16Array) {
    if (!pcm.length) return
    this.sent += pcm.length
    this.recorder?.agentAudio(pcm)
    this.leg.play(pcm)
  }

  /** Asks the leg to echo a mark once everything sent so far has played. One per reply: the simulator and
   *  the browser read a mark as the end of an answer. */
  mark() {
    if (!this.talking) return
    const name = `a${++this.markSeq}`
    this.marks.set(name, this.sent)
    this.leg.mark(name)
  }

  /** The leg echoed a mark: the audio before it has played (the provider measures playback better than we do). */
  marked(name: string) {
    const at = this.marks.get(name)
    if (at === undefined) return
    this.marks.delete(name)
    if (at > this.played) this.advanceTo(at)
  }

  /**
   * The caller's clock moved by `n` samples: as much agent audio played. Answers how many agent samples
   * played during them (for the recording's agent channel).
   */
  tick(n: number): number {
    const take = Math.min(n, this.remaining)
    if (take) this.advanceTo(this.played + take, false)
    return take
  }

  /** Barge-in: what has not played is dropped, at the leg too. */
  clear() {
    if (!this.talking) return
    this.leg.clear()
    this.recorder?.clearAgent()
    this.sent = this.played
    this.marks.clear()
    this.wake()
  }

  /** Resolves once the agent has stopped talking (everything sent has played, or was cleared). */
  whenQuiet(): Promise<void> {
    if (!this.talking) return Promise.resolve()
    return new Promise((resolve) => this.quiet.push(resolve))
  }

  /** Wakes every waiter (the call ended). */
  release() {
    this.wake()
  }

  private advanceTo(position: number, skipRecording = true) {
    // A mark jumps over audio the clock has not counted yet: the recording drops it, as it was heard
    // outside the caller's clock.
    if (skipRecording) this.recorder?.skipAgent(position - this.played)
    this.played = position
    if (!this.talking) this.wake()
  }

  private wake() {
    const waiting = this.quiet
    this.quiet = []
    for (const resolve of waiting) resolve()
  }
}
