// A call's recording: the caller on the left channel, the agent on the right, on the caller's clock, encoded
// to MP3 as the call goes (lamejs, pure JS: no ffmpeg on the host, and memory grows with the compressed
// size, about 11 MB per hour at 24 kbit/s, not with the raw audio). Agent audio is taken from a queue at the
// pace the call's clock plays it, and dropped on barge-in, so the file sounds like what the caller heard.
import { Mp3Encoder } from '@breezystack/lamejs'

const KBPS = 24
/** lamejs works in MPEG frames of 1,152 samples; feeding it whole frames avoids its internal copying. */
const CHUNK = 1152 * 4
/** No recording grows past this (the longest call the agent settings allow). */
const MAX_SECONDS = 14_400

export interface Recording {
  mp3: Buffer
  durationS: number
}

export class CallRecorder {
  private encoder: Mp3Encoder
  private left: Int16Array
  private right: Int16Array
  private fill = 0
  private out: Buffer[] = []
  private agentQueue: Int16Array[] = []
  private agentHead = 0
  private samples = 0

  constructor(private rate: number) {
    this.encoder = new Mp3Encoder(2, rate, KBPS)
    this.left = new Int16Array(CHUNK)
    this.right = new Int16Array(CHUNK)
  }

  /** Agent audio sent to the caller; it is recorded as the clock plays it. */
  agentAudio(pcm: Int16Array) {
    this.agentQueue.push(pcm)
  }

  /** The caller interrupted (or the provider reported the end of playback): the rest was never heard. */
  clearAgent() {
    this.agentQueue = []
    this.agentHead = 0
  }

  /** The first `n` queued agent samples played outside the caller's clock (a mark came first): not recorded. */
  skipAgent(n: number) {
    let left = n
    while (left > 0 && this.agentQueue.length) {
      const head = this.agentQueue[0]
      const take = Math.min(left, head.length - this.agentHead)
      this.agentHead += take
      left -= take
      if (this.agentHead >= head.length) {
        this.agentQueue.shift()
        this.agentHead = 0
      }
    }
  }

  /** One caller frame, with `agentCount` samples of agent audio playing during it. */
  push(caller: Int16Array, agentCount: number) {
    if (this.samples >= MAX_SECONDS * this.rate) return
    let agentLeft = agentCount
    for (let i = 0; i < caller.length; i++) {
      this.left[this.fill] = caller[i]
      let s = 0
      if (agentLeft > 0 && this.agentQueue.length) {
        const head = this.agentQueue[0]
        s = head[this.agentHead++]
        if (this.agentHead >= head.length) {
          this.agentQueue.shift()
          this.agentHead = 0
        }
        agentLeft--
      }
      this.right[this.fill] = s
      if (++this.fill === CHUNK) this.flushChunk()
    }
    this.samples += caller.length
  }

  private flushChunk() {
    const bytes = this.encoder.encodeBuffer(this.left.subarray(0, this.fill), this.right.subarray(0, this.fill))
    if (bytes.length) this.out.push(copy(bytes))
    this.fill = 0
  }

  finish(): Recording | null {
    if (this.fill) this.flushChunk()
    const tail = this.encoder.flush()
    if (tail.length) this.out.push(copy(tail))
    if (!this.samples) return null
    return { mp3: Buffer.concat(this.out), durationS: Math.round(this.samples / this.rate) }
  }
}

/** lamejs hands out views of its own (signed) buffer, reused on the next call: copy the bytes out. */
const copy = (bytes: ArrayLike<number> & { buffer: ArrayBufferLike; byteOffset: number; length: number }) =>
  Buffer.from(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length))
