// MP3 encoding off the event loop, with bounded concurrency and bounded memory (decisions "Abuse and cost
// (issue 30)", MP3 encoding). A fixed number of encoder threads (mp3-worker.ts) serve every recording of the
// process: a recording is a stream owned by one thread for its life (lamejs keeps state between chunks), to
// which the call's recorder posts chunks of mixed PCM, handed over rather than copied. Bounds:
// - CPU: the threads, `size` of them (SVC_MP3_WORKERS), whatever the number of calls;
// - memory: the PCM posted and not yet encoded, across all streams (the backlog), at most `backlogBytes`
//   (SVC_MP3_BACKLOG_MB). A chunk that would pass it stops its recording there: the file keeps what came
//   before and is finished normally, and the call goes on unrecorded (a log line says so);
// - a thread that dies ends the recordings it held at what it had encoded (their MP3 bytes come back with
//   every chunk, so nothing encoded is lost), and is replaced; the calls themselves never notice.
// Nothing here imports the server: the bench (bench/mp3.mjs) drives the pool as it is.
import { Worker } from 'node:worker_threads'
import type { Mp3Answer, Mp3Request, Mp3WorkerData } from './mp3-worker'

export interface Mp3PoolOptions {
  /** The encoder thread's script (#svc/mp3-worker in the built server). */
  url: URL
  /** Encoder threads (SVC_MP3_WORKERS). */
  size: number
  /** PCM bytes posted and not yet encoded, across all streams, past which a recording stops (SVC_MP3_BACKLOG_MB). */
  backlogBytes: number
  /** Test-only: each thread throws after this many chunks (SVC_MP3_WORKER_CRASH_AFTER). */
  crashAfter?: number | null
  /** The pool's own lines (a thread died, was replaced). */
  log?: (line: string) => void
}

/** What a finished stream gives: the MP3 and how many samples (per channel) it holds. */
export interface Mp3Result {
  mp3: Buffer
  samples: number
}

/** A call's end never waits longer than this for its MP3 (a thread stuck rather than dead). */
const FINISH_WAIT_MS = 120_000
/** A thread that dies younger than this, twice in a row, is replaced after this long, not at once (no crash loop). */
const RESPAWN_AFTER_MS = 1_000

interface Slot {
  index: number
  worker: Worker | null
  startedAt: number
  /** Deaths in a row of threads that lived less than RESPAWN_AFTER_MS. */
  youngDeaths: number
  streams: Set<Mp3Stream>
  /** PCM bytes posted to this thread and not yet acknowledged. */
  pending: number
}

export class Mp3Pool {
  /** PCM bytes posted and not yet encoded, across all streams. */
  backlog = 0
  /** The most the backlog has been (the bench prints it). */
  peakBacklog = 0
  private slots: Slot[]
  private streams = new Map<number, Mp3Stream>()
  private nextId = 1
  private stopped = false
  private log: (line: string) => void

  constructor(readonly opts: Mp3PoolOptions) {
    this.log = opts.log ?? ((line) => console.error(line))
    this.slots = Array.from({ length: Math.max(1, opts.size) }, (_, index) => ({
      index,
      worker: null,
      startedAt: 0,
      youngDeaths: 0,
      streams: new Set<Mp3Stream>(),
      pending: 0,
    }))
    for (const slot of this.slots) this.spawn(slot)
  }

  get size() {
    return this.slots.length
  }

  /** Threads running now (one that died is missing until it is replaced). */
  get alive() {
    return this.slots.filter((s) => s.worker).length
  }

  /** A new recording at `rate`; null when no thread is running (the call goes unrecorded). `log` gets its lines. */
  open(rate: number, log: (line: string) => void = this.log): Mp3Stream | null {
    if (this.stopped) return null
    const live = this.slots.filter((s) => s.worker)
    if (!live.length) return null
    // The thread with the fewest recordings, then the shortest queue: a stream stays on it for its life.
    const slot = live.reduce((a, b) =>
      b.streams.size < a.streams.size || (b.streams.size === a.streams.size && b.pending < a.pending) ? b : a,
    )
    const stream = new Mp3Stream(this, slot, this.nextId++, rate, log)
    this.streams.set(stream.id, stream)
    slot.streams.add(stream)
    this.post(slot, { type: 'open', id: stream.id, rate })
    return stream
  }

  /**
   * Ends the pool (the server's stop): recordings being finished get up to `timeoutMs` to come back, then the
   * threads are terminated. The threads are unref'd besides, so they never hold the process open.
   */
  async stop(timeoutMs = 5_000) {
    const finishing = [...this.streams.values()].filter((s) => s.finishing).map((s) => s.finishing)
    if (finishing.length) {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        Promise.allSettled(finishing),
        new Promise((r) => {
          timer = setTimeout(r, timeoutMs)
        }),
      ])
      clearTimeout(timer)
    }
    this.stopped = true
    await Promise.all(this.slots.map((s) => s.worker?.terminate()))
  }

  /** @internal A chunk of `stream`: false when the backlog cap refuses it. */
  admit(slot: Slot, bytes: number) {
    if (this.backlog + bytes > this.opts.backlogBytes) return false
    this.backlog += bytes
    slot.pending += bytes
    if (this.backlog > this.peakBacklog) this.peakBacklog = this.backlog
    return true
  }

  /** @internal */
  post(slot: Slot, message: Mp3Request, transfer: ArrayBuffer[] = []) {
    slot.worker?.postMessage(message, transfer)
  }

  /** @internal The stream is over (finished, dropped or its thread died): no more messages are routed to it. */
  forget(stream: Mp3Stream, slot: Slot) {
    this.streams.delete(stream.id)
    slot.streams.delete(stream)
  }

  private spawn(slot: Slot) {
    if (this.stopped) return
    const data: Mp3WorkerData = { svcMp3: true, crashAfter: this.opts.crashAfter ?? null }
    const worker = new Worker(this.opts.url, { workerData: data })
    // Never what keeps the process alive: the server's stop terminates the threads anyway.
    worker.unref()
    slot.worker = worker
    slot.startedAt = Date.now()
    let failure = ''
    worker.on('message', (m: Mp3Answer) => this.answer(slot, m))
    worker.on('error', (e) => {
      failure = e.message
    })
    worker.once('exit', (code) => this.died(slot, worker, failure || `exit code ${code}`))
  }

  private answer(slot: Slot, m: Mp3Answer) {
    if (m.type === 'encoded') {
      this.backlog -= m.pcmBytes
      slot.pending -= m.pcmBytes
    }
    this.streams.get(m.id)?.answer(m)
  }

  private died(slot: Slot, worker: Worker, why: string) {
    if (slot.worker !== worker) return
    slot.worker = null
    // What the thread held is gone: its queue no longer counts, and its recordings end where they are.
    this.backlog -= slot.pending
    slot.pending = 0
    const lost = [...slot.streams]
    for (const stream of lost) stream.threadDied(why)
    if (this.stopped) return
    slot.youngDeaths = Date.now() - slot.startedAt < RESPAWN_AFTER_MS ? slot.youngDeaths + 1 : 0
    // One crash is replaced at once; a thread that keeps dying at start waits a little each time.
    const wait = slot.youngDeaths >= 2
    this.log(
      `[mp3] encoder thread ${slot.index + 1} stopped (${why}); ${lost.length} recording(s) end at what it had encoded; ` +
        `replaced${wait ? ` in ${RESPAWN_AFTER_MS / 1000} s` : ''}`,
    )
    if (!wait) return this.spawn(slot)
    setTimeout(() => this.spawn(slot), RESPAWN_AFTER_MS).unref()
  }
}

/** One recording's side of the pool: chunks in, the MP3 out at the end. */
export class Mp3Stream {
  /** Samples (per channel) encoded so far: the length of the MP3 that `finish` will give. */
  encoded = 0
  /** Set once the recording takes no more audio (the backlog cap, or its thread died). */
  stoppedBy: 'backlog' | 'thread' | null = null
  /** The promise of `finish`, once asked. */
  finishing: Promise<Mp3Result | null> | null = null
  private parts: Buffer[] = []
  private written = 0
  private settle: ((r: Mp3Result | null) => void) | null = null
  private threadGone = false
  private over = false

  constructor(
    private pool: Mp3Pool,
    private slot: Slot,
    readonly id: number,
    readonly rate: number,
    private log: (line: string) => void,
  ) {}

  /** False once the recording takes no more audio. */
  get writable() {
    return !this.stoppedBy && !this.finishing
  }

  /**
   * A chunk: `pcm` holds `samples` left-channel samples then as many right-channel ones. Its buffer is handed
   * to the thread (the caller must not touch it again). Answers false when the recording takes no more audio.
   */
  write(pcm: Int16Array, samples: number): boolean {
    if (!this.writable) return false
    const buffer = pcm.buffer as ArrayBuffer
    if (!this.pool.admit(this.slot, buffer.byteLength)) {
      this.stoppedBy = 'backlog'
      const mb = (n: number) => Math.round(n / 1e5) / 10
      this.log(
        `recording stops at ${this.seconds(this.written)} s: ${mb(this.pool.backlog)} MB of call audio is waiting ` +
          `to be encoded on this instance (cap ${mb(this.pool.opts.backlogBytes)} MB); the file keeps what came before`,
      )
      return false
    }
    this.written += samples
    this.pool.post(this.slot, { type: 'pcm', id: this.id, pcm: buffer, samples }, [buffer])
    return true
  }

  /** The MP3 of everything written (or of what was encoded before its thread died); null when it holds nothing. */
  finish(): Promise<Mp3Result | null> {
    if (this.finishing) return this.finishing
    this.finishing = new Promise<Mp3Result | null>((resolve) => {
      this.settle = resolve
      if (this.threadGone) return this.end()
      this.pool.post(this.slot, { type: 'finish', id: this.id })
      const timer = setTimeout(() => {
        if (this.over) return
        this.log(
          `recording ends at ${this.seconds(this.encoded)} s: its MP3 was not ready within ${FINISH_WAIT_MS / 1000} s`,
        )
        this.pool.post(this.slot, { type: 'drop', id: this.id })
        this.end()
      }, FINISH_WAIT_MS)
      timer.unref()
    })
    return this.finishing
  }

  /** @internal */
  answer(m: Mp3Answer) {
    if (this.over) return
    if (m.mp3) this.parts.push(Buffer.from(m.mp3))
    if (m.type === 'encoded') this.encoded += m.samples
    else this.end()
  }

  /** @internal */
  threadDied(why: string) {
    if (this.over) return
    this.threadGone = true
    this.stoppedBy ??= 'thread'
    this.log(`recording ends at ${this.seconds(this.encoded)} s: its MP3 encoder thread stopped (${why})`)
    if (this.settle) this.end()
    else this.pool.forget(this, this.slot)
  }

  private end() {
    this.over = true
    this.pool.forget(this, this.slot)
    const settle = this.settle
    this.settle = null
    settle?.(this.encoded ? { mp3: Buffer.concat(this.parts), samples: this.encoded } : null)
  }

  private seconds(samples: number) {
    return Math.round(samples / this.rate)
  }
}
