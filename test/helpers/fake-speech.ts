// A local OpenAI-compatible speech server speaking tone text (server/lib/audio.ts): /audio/speech answers
// the input as a 24 kHz tone WAV (or, with response_format "pcm", as raw 24 kHz PCM16 streamed in chunks
// at a chosen pace), /audio/transcriptions reads tones back from the uploaded WAV. So the openai speech
// provider runs end to end, with real multipart, WAV and streamed PCM on the wire, and no network.
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { decodeToneSpeech, decodeWav, encodeToneText, encodeWav } from '~/lib/audio'

export interface FakeSpeechRequest {
  method: string
  path: string
  authorization: string | undefined
  contentType: string
  /** The JSON body's fields, or the multipart form's text fields. */
  fields: Record<string, unknown>
  /** The multipart upload, if any. */
  file: { name: string; type: string; bytes: number } | null
  /** When the last byte of a streamed (pcm) answer was written (performance.now()); unset until then. */
  finishedAt?: number
}

/** How a response_format "pcm" answer is streamed. */
export interface FakePcmPace {
  /** Bytes per write; odd by default, so samples straddle network chunks. */
  chunkBytes: number
  /** Wait between the headers and the first audio byte. */
  firstByteDelayMs: number
  /** Audio sent per second of wall time, in seconds of audio (4: four times real time); 0 sends at once. */
  speed: number
}

export interface FakeSpeech {
  /** Base URL, ending in /v1. */
  url: string
  requests: FakeSpeechRequest[]
  /** Delays every answer (headers included) by this much. */
  delayMs: number
  /** The pace of streamed (pcm) answers; change it between tests. */
  pcm: FakePcmPace
  /** The next request gets this status and JSON body instead of its normal answer. */
  failNext(status: number, body?: unknown): void
  close(): Promise<void>
}

const TTS_RATE = 24000
const PCM_DEFAULTS: FakePcmPace = { chunkBytes: 4801, firstByteDelayMs: 0, speed: 0 }
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms))

const readBody = (req: IncomingMessage) =>
  new Promise<Buffer>((ok, ko) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => ok(Buffer.concat(chunks)))
    req.on('error', ko)
  })

export async function startFakeSpeech(
  opts: { delayMs?: number; pcm?: Partial<FakePcmPace> } = {},
): Promise<FakeSpeech> {
  const failures: [number, unknown][] = []
  const fake: FakeSpeech = {
    url: '',
    requests: [],
    delayMs: opts.delayMs ?? 0,
    pcm: { ...PCM_DEFAULTS, ...opts.pcm },
    failNext: (status, body = { error: { message: `scripted ${status}`, type: 'server_error' } }) => {
      failures.push([status, body])
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise((ok) => server.close(ok))
    },
  }
  interface Answer {
    status: number
    type: string
    body: Buffer
    /** Streamed in paced chunks (pcm) rather than written whole with a content-length. */
    streamed?: FakeSpeechRequest
  }
  const json = (status: number, body: unknown): Answer => ({
    status,
    type: 'application/json',
    body: Buffer.from(JSON.stringify(body)),
  })

  async function answer(req: IncomingMessage): Promise<Answer> {
    const raw = await readBody(req)
    const contentType = req.headers['content-type'] ?? ''
    const seen: FakeSpeechRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      authorization: req.headers.authorization,
      contentType,
      fields: {},
      file: null,
    }
    fake.requests.push(seen)
    let form: FormData | null = null
    if (contentType.startsWith('multipart/form-data')) {
      // undici's multipart parser, through a Request built from the raw body.
      form = await new Request('http://fake.invalid/', {
        method: 'POST',
        headers: { 'content-type': contentType },
        body: new Uint8Array(raw),
      }).formData()
      for (const [k, v] of form) {
        if (typeof v === 'string') seen.fields[k] = v
        else seen.file = { name: v.name, type: v.type, bytes: v.size }
      }
    } else if (contentType.startsWith('application/json')) {
      try {
        seen.fields = JSON.parse(raw.toString('utf8'))
      } catch {
        return json(400, { error: { message: 'invalid JSON' } })
      }
    }
    const failure = failures.shift()
    if (failure) return json(failure[0], failure[1])

    if (req.method === 'POST' && seen.path === '/v1/audio/transcriptions') {
      const file = form?.get('file')
      if (!file || typeof file === 'string') return json(400, { error: { message: "'file' is required" } })
      if (!form?.get('model')) return json(400, { error: { message: "'model' is required" } })
      try {
        const { samples, sampleRate } = decodeWav(new Uint8Array(await file.arrayBuffer()))
        return json(200, { text: decodeToneSpeech(samples, sampleRate) ?? '' })
      } catch (e) {
        return json(400, { error: { message: (e as Error).message } })
      }
    }
    if (req.method === 'POST' && seen.path === '/v1/audio/speech') {
      const { input, model, speed, response_format } = seen.fields as Record<string, unknown>
      if (typeof input !== 'string' || !input || typeof model !== 'string')
        return json(400, { error: { message: "'input' and 'model' are required" } })
      const wpm = 150 * (typeof speed === 'number' ? speed : 1)
      const samples = encodeToneText(input, TTS_RATE, { wordsPerMinute: wpm })
      // Raw little-endian samples with no header, as OpenAI's "pcm" format.
      if (response_format === 'pcm')
        return {
          status: 200,
          type: 'audio/pcm',
          body: Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength),
          streamed: seen,
        }
      return {
        status: 200,
        type: 'audio/wav',
        body: encodeWav(samples, TTS_RATE),
      }
    }
    return json(404, { error: { message: `no route ${req.method} ${seen.path}` } })
  }

  const server = createServer(async (req, res) => {
    let out: Answer
    try {
      out = await answer(req)
    } catch (e) {
      out = json(500, { error: { message: String(e) } })
    }
    if (fake.delayMs > 0) await sleep(fake.delayMs)
    if (res.destroyed) return
    if (!out.streamed) {
      res.writeHead(out.status, { 'content-type': out.type, 'content-length': out.body.length }).end(out.body)
      return
    }
    // Chunked, paced like a TTS engine producing audio faster than (or as fast as) it plays.
    const pace = { ...fake.pcm }
    res.writeHead(out.status, { 'content-type': out.type })
    res.flushHeaders()
    if (pace.firstByteDelayMs > 0) await sleep(pace.firstByteDelayMs)
    const size = Math.max(1, Math.floor(pace.chunkBytes))
    for (let at = 0; at < out.body.length; at += size) {
      // The client went away (an abort): stop producing.
      if (res.destroyed) return
      const piece = out.body.subarray(at, at + size)
      // Resolves once written, or at once if the client hangs up meanwhile.
      await new Promise<void>((ok) => {
        res.once('close', ok)
        res.write(piece, () => {
          res.off('close', ok)
          ok()
        })
      })
      if (pace.speed > 0) await sleep((piece.length / 2 / TTS_RATE / pace.speed) * 1000)
    }
    if (res.destroyed) return
    out.streamed.finishedAt = performance.now()
    res.end()
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  return fake
}
