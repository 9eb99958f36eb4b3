// A local OpenAI-compatible speech server speaking tone text (server/lib/audio.ts): /audio/speech answers
// the input as a 24 kHz tone WAV, /audio/transcriptions reads tones back from the uploaded WAV. So the
// openai speech provider runs end to end, with real multipart and WAV on the wire, and no network.
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { decodeToneText, decodeWav, encodeToneText, encodeWav } from '~/lib/audio'

export interface FakeSpeechRequest {
  method: string
  path: string
  authorization: string | undefined
  contentType: string
  /** The JSON body's fields, or the multipart form's text fields. */
  fields: Record<string, unknown>
  /** The multipart upload, if any. */
  file: { name: string; type: string; bytes: number } | null
}

export interface FakeSpeech {
  /** Base URL, ending in /v1. */
  url: string
  requests: FakeSpeechRequest[]
  /** Delays every answer (headers included) by this much. */
  delayMs: number
  /** The next request gets this status and JSON body instead of its normal answer. */
  failNext(status: number, body?: unknown): void
  close(): Promise<void>
}

const TTS_RATE = 24000

const readBody = (req: IncomingMessage) =>
  new Promise<Buffer>((ok, ko) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => ok(Buffer.concat(chunks)))
    req.on('error', ko)
  })

export async function startFakeSpeech(opts: { delayMs?: number } = {}): Promise<FakeSpeech> {
  const failures: [number, unknown][] = []
  const fake: FakeSpeech = {
    url: '',
    requests: [],
    delayMs: opts.delayMs ?? 0,
    failNext: (status, body = { error: { message: `scripted ${status}`, type: 'server_error' } }) => {
      failures.push([status, body])
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise((ok) => server.close(ok))
    },
  }
  const json = (status: number, body: unknown) => ({
    status,
    type: 'application/json',
    body: Buffer.from(JSON.stringify(body)),
  })

  async function answer(req: IncomingMessage): Promise<{ status: number; type: string; body: Buffer }> {
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
        return json(200, { text: decodeToneText(samples, sampleRate) ?? '' })
      } catch (e) {
        return json(400, { error: { message: (e as Error).message } })
      }
    }
    if (req.method === 'POST' && seen.path === '/v1/audio/speech') {
      const { input, model, speed } = seen.fields as { input?: unknown; model?: unknown; speed?: unknown }
      if (typeof input !== 'string' || !input || typeof model !== 'string')
        return json(400, { error: { message: "'input' and 'model' are required" } })
      const wpm = 150 * (typeof speed === 'number' ? speed : 1)
      return {
        status: 200,
        type: 'audio/wav',
        body: encodeWav(encodeToneText(input, TTS_RATE, { wordsPerMinute: wpm }), TTS_RATE),
      }
    }
    return json(404, { error: { message: `no route ${req.method} ${seen.path}` } })
  }

  const server = createServer(async (req, res) => {
    let out: { status: number; type: string; body: Buffer }
    try {
      out = await answer(req)
    } catch (e) {
      out = json(500, { error: { message: String(e) } })
    }
    if (fake.delayMs > 0) await new Promise((ok) => setTimeout(ok, fake.delayMs))
    if (res.destroyed) return
    res.writeHead(out.status, { 'content-type': out.type, 'content-length': out.body.length }).end(out.body)
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  return fake
}
