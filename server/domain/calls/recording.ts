// A call's recording: the caller on the left channel, the agent on the right, on the caller's clock, encoded
// to MP3 (lamejs, pure JS: no ffmpeg on the host) as the call goes. Agent audio is taken from a queue at the
// pace the call's clock plays it, and dropped on barge-in, so the file sounds like what the caller heard.
// This thread only mixes the two channels into chunks; the encoding runs in the process's pool of encoder
// threads (mp3-pool.ts, decisions "Abuse and cost (issue 30)"), which send the MP3 bytes back as they go, so
// memory grows with the compressed size (about 11 MB per hour at 24 kbit/s), not with the raw audio.
import workerUrl from '#svc/mp3-worker'
import type { Config } from '~/config'
import { Mp3Pool, type Mp3Stream } from './mp3-pool'

/** Samples per channel in one chunk sent to the encoder: whole MPEG frames of 1,152 (lamejs copies less). */
const CHUNK = 1152 * 8
/** No recording grows past this (the longest call the agent settings allow). */
const MAX_SECONDS = 14_400

export interface Recording {
  mp3: Buffer
  durationS: number
}

let pool: Mp3Pool | undefined

/** The process's encoder threads, started with the first recording. */
export function recordingPool(config: Pick<Config, 'mp3Workers' | 'mp3BacklogBytes' | 'mp3WorkerCrashAfter'>) {
  pool ??= new Mp3Pool({
    url: new URL(workerUrl),
    size: config.mp3Workers,
    backlogBytes: config.mp3BacklogBytes,
    crashAfter: config.mp3WorkerCrashAfter,
  })
  return pool
}

/** The server's stop: recordings being finished get `timeoutMs`, then the threads end. */
export async function stopRecordingPool(timeoutMs: number) {
  const p = pool
  pool = undefined
  await p?.stop(timeoutMs)
}

export class CallRecorder {
  private stream: Mp3Stream | null
  /** The chunk being mixed: the left channel in [0, CHUNK), the right in [CHUNK, 2 × CHUNK). */
  private chunk = new Int16Array(2 * CHUNK)
  private fill = 0
  private agentQueue: Int16Array[] = []
  private agentHead = 0
  private samples = 0

  constructor(
    private rate: number,
    pool: Mp3Pool,
    log: (line: string) => void,
  ) {
    this.stream = pool.open(rate, log)
    if (!this.stream) log('not recorded: no MP3 encoder thread is running')
  }

  /** Agent audio sent to the caller; it is recorded as the clock plays it. */
  agentAudio(pcm: Int16Array) {
    if (this.stream?.writable) this.agentQueue.push(pcm)
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
    if (!this.stream?.writable) return this.clearAgent()
    if (this.samples >= MAX_SECONDS * this.rate) return
    let agentLeft = agentCount
    for (let i = 0; i < caller.length; i++) {
      this.chunk[this.fill] = caller[i]
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
      this.chunk[CHUNK + this.fill] = s
      if (++this.fill === CHUNK) this.flushChunk()
    }
    this.samples += caller.length
  }

  /** Hands the chunk to the encoder thread (its buffer moves there) and starts a new one. */
  private flushChunk() {
    const chunk = this.chunk
    // A short last chunk: its right channel moves up to follow the left, the layout the thread reads.
    if (this.fill < CHUNK) chunk.copyWithin(this.fill, CHUNK, CHUNK + this.fill)
    this.stream?.write(chunk, this.fill)
    this.chunk = new Int16Array(2 * CHUNK)
    this.fill = 0
  }

  /** The MP3 of the call, or of its part before the recording stopped (backlog cap, encoder thread died). */
  async finish(): Promise<Recording | null> {
    if (!this.stream) return null
    if (this.fill && this.stream.writable) this.flushChunk()
    const out = await this.stream.finish()
    if (!out) return null
    return { mp3: out.mp3, durationS: Math.round(out.samples / this.rate) }
  }
}
