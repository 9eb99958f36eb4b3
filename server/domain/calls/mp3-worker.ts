// The MP3 encoder thread (decisions "Abuse and cost (issue 30)", MP3 encoding): lamejs is pure JS and costs
// about 23 ms of CPU per second of call audio, so it runs here, in a small pool of threads (mp3-pool.ts),
// never on the event loop. One thread holds the encoders of many recordings, keyed by the pool's stream id;
// messages of one stream arrive in order, so its acknowledgements do too. Built as its own chunk
// (nitro.config.ts, #svc/mp3-worker): it imports lamejs and nothing of the server.
import { setPriority } from 'node:os'
import { isMainThread, parentPort, workerData } from 'node:worker_threads'
import { Mp3Encoder } from '@breezystack/lamejs'

/** MP3 bit rate of every recording: speech, two channels, about 11 MB an hour. */
export const KBPS = 24

/** Main thread → encoder thread. `pcm` holds `samples` left-channel samples, then as many right-channel ones. */
export type Mp3Request =
  | { type: 'open'; id: number; rate: number }
  | { type: 'pcm'; id: number; pcm: ArrayBuffer; samples: number }
  | { type: 'finish'; id: number }
  | { type: 'drop'; id: number }

/** Encoder thread → main thread: the MP3 bytes a `pcm` or `finish` produced (transferred, not copied). */
export type Mp3Answer =
  | { type: 'encoded'; id: number; samples: number; pcmBytes: number; mp3: ArrayBuffer | null }
  | { type: 'finished'; id: number; mp3: ArrayBuffer | null }

export interface Mp3WorkerData {
  svcMp3: true
  /** Test-only (SVC_MP3_WORKER_CRASH_AFTER): the thread throws after encoding this many chunks. */
  crashAfter: number | null
}

/** Niceness of an encoder thread: below the event loop's, which serves the calls themselves. */
const NICE = 10

/** lamejs hands out views of its own buffer, reused on the next call: the bytes are copied out. */
const own = (bytes: Int8Array | Uint8Array): ArrayBuffer | null =>
  bytes.length ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length).slice().buffer : null

if (!isMainThread && parentPort && (workerData as Partial<Mp3WorkerData> | null)?.svcMp3) {
  const port = parentPort
  const { crashAfter } = workerData as Mp3WorkerData
  // When the cores are short, the calls' event loop gets them first and the backlog grows instead (its cap
  // sheds recordings, never calls). Linux gives each thread its own nice value, so this lowers this thread
  // only; elsewhere it would lower the whole process, so it is not done.
  if (process.platform === 'linux')
    try {
      setPriority(NICE)
    } catch {}
  const encoders = new Map<number, Mp3Encoder>()
  let chunks = 0
  port.on('message', (m: Mp3Request) => {
    switch (m.type) {
      case 'open':
        encoders.set(m.id, new Mp3Encoder(2, m.rate, KBPS))
        break
      case 'pcm': {
        const encoder = encoders.get(m.id)
        const left = new Int16Array(m.pcm, 0, m.samples)
        const right = new Int16Array(m.pcm, m.samples * 2, m.samples)
        const mp3 = encoder ? own(encoder.encodeBuffer(left, right)) : null
        const answer: Mp3Answer = { type: 'encoded', id: m.id, samples: m.samples, pcmBytes: m.pcm.byteLength, mp3 }
        port.postMessage(answer, mp3 ? [mp3] : [])
        if (crashAfter !== null && ++chunks >= crashAfter) throw new Error(`test crash after ${chunks} chunks`)
        break
      }
      case 'finish': {
        const encoder = encoders.get(m.id)
        encoders.delete(m.id)
        const mp3 = encoder ? own(encoder.flush()) : null
        port.postMessage({ type: 'finished', id: m.id, mp3 } satisfies Mp3Answer, mp3 ? [mp3] : [])
        break
      }
      case 'drop':
        encoders.delete(m.id)
        break
    }
  })
}
