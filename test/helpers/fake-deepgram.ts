// A local Deepgram written from its documented protocol (the URLs are at the top of providers/speech/deepgram.ts),
// speaking tone text (server/lib/audio.ts) instead of words, like fake-speech.ts does for OpenAI:
//   POST /v1/listen  pre-recorded: reads the tones of the uploaded WAV (or raw linear16) back as the transcript
//   POST /v1/speak   answers the text as tone PCM (linear16 at the asked sample_rate, container none or wav),
//                    streamed in chunks with an optional first-byte delay and pace
//   WS   /v1/listen  live: checks `Authorization: Token …` and the query (400/401 before the upgrade, the reason
//                    in dg-error), keeps a small VAD over the audio (RMS of 20 ms frames) and answers with
//                    interim Results as tone symbols decode, a final Results with speech_final after
//                    `endpointing` ms of silence, UtteranceEnd after `utterance_end_ms` of silence since the last
//                    word, a from_finalize Results for Finalize, Metadata then a close for CloseStream, and the
//                    NET-0001 close after 10 s without audio or KeepAlive.
// Everything received is recorded, so a test can assert on the wire. Other tests may run the whole voice loop
// against it (SVC_STT=deepgram with DEEPGRAM_BASE_URL=fake.url).
import { randomUUID } from 'node:crypto'
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import type WebSocket from 'ws'
import { WebSocketServer } from 'ws'
import { decodeToneText, decodeWav, encodeToneText, encodeWav, rms } from '~/lib/audio'

export interface FakeDeepgramOptions {
  /** The key the fake accepts as `Authorization: Token <key>` (default 'fake-deepgram-key'). */
  key?: string
  /** How /v1/speak streams its body (also changeable later through `fake.speak`). */
  speak?: Partial<SpeakPacing>
  /** The idle close of a live socket without audio or KeepAlive (Deepgram: 10 s). */
  idleTimeoutMs?: number
}

export interface SpeakPacing {
  /** Delay before the status line and first audio byte. */
  firstByteDelayMs: number
  /** Bytes per body chunk (odd sizes split samples across chunks, as a real network may). */
  chunkBytes: number
  /** Pause between chunks; at 0 the whole body is written at once. */
  chunkIntervalMs: number
}

export interface FakeDeepgramRequest {
  method: string
  path: string
  query: Record<string, string>
  authorization: string | undefined
  contentType: string
  /** Body size in bytes. */
  bytes: number
  /** The JSON body, when there is one. */
  json: unknown
  /** A WebSocket upgrade (accepted or refused). */
  upgrade: boolean
  /** The W3C trace context sent with the request (decisions "Tracing"), if any. */
  traceparent?: string
}

export interface FakeDeepgramSocket {
  query: Record<string, string>
  authorization: string | undefined
  /** Audio bytes received (binary messages). */
  audioBytes: number
  /** The `type` of each text message received, in order (KeepAlive, Finalize, CloseStream, or '?' if unreadable). */
  controls: string[]
  /** Every message the fake sent, in order. */
  sent: Record<string, unknown>[]
  /** Set when the socket closed, with the close code the fake saw or sent. */
  closed: { code: number; by: 'client' | 'server' } | null
  /** Closes the socket from the server side, as a failing server would. */
  drop(code?: number, reason?: string): void
}

export interface FakeDeepgram {
  /** Base URL (http://127.0.0.1:port): what DEEPGRAM_BASE_URL takes. */
  url: string
  key: string
  requests: FakeDeepgramRequest[]
  sockets: FakeDeepgramSocket[]
  speak: SpeakPacing
  /** The next HTTP request or WebSocket upgrade gets this status and JSON body instead of its normal answer. */
  failNext(status: number, body?: unknown): void
  close(): Promise<void>
}

const TTS_RATES = [8000, 16000, 24000, 32000, 48000]
const MAX_TEXT_CHARS = 2000
const MAX_BODY_BYTES = 64 * 1024 * 1024
const FRAME_MS = 20
// Tone text sits near 9,800 RMS and silence at 0; anything in between counts as speech from here up.
const VAD_RMS = 500
const INTERIM_EVERY_MS = 100
// A segment longer than this is finalized without an endpoint, so memory stays bounded.
const MAX_SEGMENT_SECONDS = 60
const SYMBOL_SECONDS = 0.04
const MODEL_INFO = { name: 'fake-tone', version: '2024-01-01.0', arch: 'tone-text' }

const query = (url: URL) => Object.fromEntries(url.searchParams)
const dgError = (code: string, message: string) => ({ err_code: code, err_msg: message, request_id: randomUUID() })

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((ok, ko) => {
    const chunks: Buffer[] = []
    let total = 0
    req.on('data', (c: Buffer) => {
      total += c.length
      if (total <= MAX_BODY_BYTES) chunks.push(c)
    })
    req.on('end', () => ok(total > MAX_BODY_BYTES ? null : Buffer.concat(chunks)))
    req.on('error', ko)
  })
}

/** Words of a transcript with times from the tone layout: one 40 ms symbol per character from the onset. */
function words(text: string, onsetSeconds: number) {
  const out: { word: string; start: number; end: number; confidence: number; punctuated_word: string }[] = []
  for (const m of text.matchAll(/\S+/g)) {
    const start = onsetSeconds + (m.index ?? 0) * SYMBOL_SECONDS
    out.push({
      word: m[0].toLowerCase().replace(/[^\p{L}\p{N}']/gu, ''),
      start: Number(start.toFixed(3)),
      end: Number((start + m[0].length * SYMBOL_SECONDS).toFixed(3)),
      confidence: 0.99,
      punctuated_word: m[0],
    })
  }
  return out
}

const bool = (v: string | undefined) => v === undefined || v === 'true' || v === 'false'
const int = (v: string | undefined, min: number, max: number) =>
  v !== undefined && /^\d+$/.test(v) && Number(v) >= min && Number(v) <= max

/** The reason a live query is refused, or null. Only what the fake cannot honour, or Deepgram documents as invalid. */
function refuseLiveQuery(q: Record<string, string>): string | null {
  if (q.encoding !== undefined && q.encoding !== 'linear16') return `the fake decodes linear16 only, not ${q.encoding}`
  if (q.encoding === undefined) return 'containerized audio is not supported by the fake: send encoding=linear16'
  if (!int(q.sample_rate, 8000, 48000)) return 'sample_rate is required with encoding (raw audio), 8000–48000'
  if (q.channels !== undefined && q.channels !== '1') return 'the fake hears one channel'
  for (const k of ['interim_results', 'vad_events', 'smart_format', 'punctuate'])
    if (!bool(q[k])) return `${k} must be true or false`
  if (q.endpointing !== undefined && q.endpointing !== 'false' && !int(q.endpointing, 0, 60_000))
    return 'endpointing must be false or a number of milliseconds'
  if (q.utterance_end_ms !== undefined) {
    if (!int(q.utterance_end_ms, 1000, 60_000)) return 'utterance_end_ms must be at least 1000'
    if (q.interim_results !== 'true') return 'utterance_end_ms requires interim_results=true'
  }
  return null
}

/** One live socket: the VAD, the current segment and its answers. */
class LiveSession {
  private readonly rate: number
  private readonly frame: number
  private readonly endpointing: number | null
  private readonly utteranceEnd: number | null
  private readonly interim: boolean
  private readonly vadEvents: boolean
  private readonly requestId = randomUUID()
  private carry: number | null = null
  private partial: number[] = []
  /** Samples heard since the socket opened. */
  private total = 0
  private segment: Int16Array[] = []
  private segmentStart = 0
  private segmentSamples = 0
  /** Where speech started in the current segment (absolute sample), or -1. */
  private speechOnset = -1
  private speaking = false
  private silence = 0
  private lastSpeechEnd = 0
  private sinceInterim = 0
  private lastInterim = ''
  /** Words were transcribed since the last UtteranceEnd. */
  private wordsPending = false
  private idle: NodeJS.Timeout | null = null

  constructor(
    private readonly ws: WebSocket,
    readonly record: FakeDeepgramSocket,
    private readonly idleTimeoutMs: number,
  ) {
    const q = record.query
    this.rate = Number(q.sample_rate)
    this.frame = Math.round((this.rate * FRAME_MS) / 1000)
    // Deepgram's default endpointing is 10 ms; false turns it off.
    this.endpointing = q.endpointing === 'false' ? null : Number(q.endpointing ?? 10)
    this.utteranceEnd = q.utterance_end_ms === undefined ? null : Number(q.utterance_end_ms)
    this.interim = q.interim_results === 'true'
    this.vadEvents = q.vad_events === 'true'
    ws.on('message', (data, isBinary) => this.onMessage(data as Buffer, isBinary))
    ws.on('close', (code) => {
      this.stopIdle()
      record.closed ??= { code, by: 'client' }
    })
    ws.on('error', () => {})
    this.touch()
  }

  private send(msg: Record<string, unknown>) {
    if (this.ws.readyState !== this.ws.OPEN) return
    this.record.sent.push(msg)
    this.ws.send(JSON.stringify(msg))
  }

  serverClose(code: number, reason: string) {
    this.stopIdle()
    this.record.closed ??= { code, by: 'server' }
    this.ws.close(code, reason)
  }

  private stopIdle() {
    if (this.idle) clearTimeout(this.idle)
    this.idle = null
  }

  private touch() {
    this.stopIdle()
    this.idle = setTimeout(
      () =>
        this.serverClose(
          1011,
          'Deepgram did not receive audio data or a text message within the timeout window. See https://dpgr.am/net0001',
        ),
      this.idleTimeoutMs,
    )
    this.idle.unref()
  }

  private onMessage(data: Buffer, isBinary: boolean) {
    if (this.record.closed) return
    this.touch()
    if (isBinary) return this.onAudio(data)
    let type = '?'
    try {
      const msg = JSON.parse(data.toString('utf8'))
      if (typeof msg?.type === 'string') type = msg.type
    } catch {}
    this.record.controls.push(type)
    if (type === 'Finalize') this.finalize(true)
    else if (type === 'CloseStream') {
      if (this.speechOnset >= 0) this.finalize(false, true)
      this.send({
        type: 'Metadata',
        transaction_key: 'deprecated',
        request_id: this.requestId,
        sha256: '0'.repeat(64),
        created: new Date().toISOString(),
        duration: this.total / this.rate,
        channels: 1,
      })
      this.serverClose(1000, '')
    }
    // KeepAlive needs no answer; the timer was reset above.
  }

  private onAudio(bytes: Buffer) {
    this.record.audioBytes += bytes.length
    let i = 0
    if (this.carry !== null && bytes.length) {
      this.pushSample(((this.carry | (bytes[0] << 8)) << 16) >> 16)
      this.carry = null
      i = 1
    }
    for (; i + 1 < bytes.length; i += 2) this.pushSample(bytes.readInt16LE(i))
    if (i < bytes.length) this.carry = bytes[i]
  }

  private pushSample(v: number) {
    this.partial.push(v)
    if (this.partial.length === this.frame) {
      const frame = Int16Array.from(this.partial)
      this.partial = []
      this.onFrame(frame)
    }
  }

  private onFrame(frame: Int16Array) {
    const start = this.total
    this.total += frame.length
    this.segment.push(frame)
    this.segmentSamples += frame.length
    if (rms(frame) >= VAD_RMS) {
      if (!this.speaking && this.vadEvents)
        this.send({ type: 'SpeechStarted', channel: [0], timestamp: Number((start / this.rate).toFixed(3)) })
      if (this.speechOnset < 0) this.speechOnset = start
      this.speaking = true
      this.silence = 0
      this.lastSpeechEnd = this.total
    } else if (this.speaking) this.silence += frame.length

    if (this.speaking && this.endpointing !== null && this.silence >= (this.endpointing * this.rate) / 1000) {
      this.finalize(false, true)
    } else if (this.segmentSamples >= MAX_SEGMENT_SECONDS * this.rate) this.finalize(false)
    else if (this.interim && this.speaking) {
      this.sinceInterim += frame.length
      if (this.sinceInterim >= (INTERIM_EVERY_MS * this.rate) / 1000) {
        this.sinceInterim = 0
        const text = this.decode()
        if (text && text !== this.lastInterim) {
          this.lastInterim = text
          this.results(text, { is_final: false, speech_final: false })
        }
      }
    }

    if (
      this.wordsPending &&
      this.utteranceEnd !== null &&
      !this.speaking &&
      this.total - this.lastSpeechEnd >= (this.utteranceEnd * this.rate) / 1000
    ) {
      this.wordsPending = false
      this.send({
        type: 'UtteranceEnd',
        channel: [0, 1],
        last_word_end: Number((this.lastSpeechEnd / this.rate).toFixed(3)),
      })
    }
  }

  private decode(): string {
    if (this.speechOnset < 0) return ''
    const all = new Int16Array(this.segmentSamples)
    let o = 0
    for (const f of this.segment) {
      all.set(f, o)
      o += f.length
    }
    return decodeToneText(all, this.rate) ?? ''
  }

  /** Ends the current segment with a final Results: for Finalize, at an endpoint, or when it grew too long. */
  private finalize(fromFinalize: boolean, speechFinal = false) {
    const text = this.decode()
    this.results(text, { is_final: true, speech_final: speechFinal, from_finalize: fromFinalize })
    if (text) this.wordsPending = true
    this.segment = []
    this.segmentStart = this.total
    this.segmentSamples = 0
    this.speechOnset = -1
    this.speaking = false
    this.silence = 0
    this.sinceInterim = 0
    this.lastInterim = ''
  }

  private results(text: string, flags: { is_final: boolean; speech_final: boolean; from_finalize?: boolean }) {
    const onset = this.speechOnset >= 0 ? this.speechOnset / this.rate : this.segmentStart / this.rate
    this.send({
      type: 'Results',
      channel_index: [0, 1],
      duration: Number(((this.total - this.segmentStart) / this.rate).toFixed(3)),
      start: Number((this.segmentStart / this.rate).toFixed(3)),
      ...flags,
      from_finalize: flags.from_finalize ?? false,
      channel: {
        alternatives: [{ transcript: text, confidence: text ? 0.99 : 0, words: words(text, onset) }],
      },
      metadata: { request_id: this.requestId, model_info: MODEL_INFO, model_uuid: randomUUID() },
    })
  }
}

export async function startFakeDeepgram(opts: FakeDeepgramOptions = {}): Promise<FakeDeepgram> {
  const key = opts.key ?? 'fake-deepgram-key'
  const idleTimeoutMs = opts.idleTimeoutMs ?? 10_000
  const failures: [number, unknown][] = []
  const sessions = new Set<LiveSession>()
  const wss = new WebSocketServer({ noServer: true, maxPayload: 8 * 1024 * 1024, perMessageDeflate: false })

  const fake: FakeDeepgram = {
    url: '',
    key,
    requests: [],
    sockets: [],
    speak: { firstByteDelayMs: 0, chunkBytes: 4800, chunkIntervalMs: 0, ...opts.speak },
    failNext: (status, body = dgError('SCRIPTED', `scripted ${status}`)) => {
      failures.push([status, body])
    },
    close: async () => {
      for (const s of sessions) s.serverClose(1001, 'fake shutting down')
      for (const c of wss.clients) c.terminate()
      server.closeAllConnections()
      await new Promise<void>((ok) => wss.close(() => ok()))
      await new Promise((ok) => server.close(ok))
    },
  }

  const authorized = (req: IncomingMessage) => req.headers.authorization === `Token ${key}`

  const json = (res: ServerResponse, status: number, body: unknown) => {
    const bytes = Buffer.from(JSON.stringify(body))
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length })
    res.end(bytes)
  }

  function listenPrerecorded(req: IncomingMessage, res: ServerResponse, q: Record<string, string>, body: Buffer) {
    const type = req.headers['content-type'] ?? ''
    if (body.length === 0) return json(res, 400, dgError('Bad Request', 'empty audio'))
    let pcm: { samples: Int16Array; sampleRate: number }
    try {
      if (type.startsWith('application/json'))
        return json(res, 400, dgError('Bad Request', 'the fake transcribes uploaded audio only, not URLs'))
      if (q.encoding !== undefined) {
        if (q.encoding !== 'linear16' || !int(q.sample_rate, 8000, 48000))
          return json(res, 400, dgError('Bad Request', 'raw audio needs encoding=linear16 and sample_rate'))
        const samples = new Int16Array(body.length >> 1)
        for (let i = 0; i < samples.length; i++) samples[i] = body.readInt16LE(i * 2)
        pcm = { samples, sampleRate: Number(q.sample_rate) }
      } else pcm = decodeWav(body)
    } catch (e) {
      return json(res, 400, dgError('Bad Request', `failed to process audio: ${(e as Error).message}`))
    }
    const text = pcm.sampleRate >= 8000 ? (decodeToneText(pcm.samples, pcm.sampleRate) ?? '') : ''
    const duration = pcm.samples.length / pcm.sampleRate
    json(res, 200, {
      metadata: {
        transaction_key: 'deprecated',
        request_id: randomUUID(),
        sha256: '0'.repeat(64),
        created: new Date().toISOString(),
        duration,
        channels: 1,
        models: [randomUUID()],
        model_info: {},
      },
      results: {
        channels: [{ alternatives: [{ transcript: text, confidence: text ? 0.99 : 0, words: words(text, 0) }] }],
      },
    })
  }

  async function speak(res: ServerResponse, q: Record<string, string>, body: unknown) {
    const text = (body as { text?: unknown } | null)?.text
    if (typeof text !== 'string' || !text.trim()) return json(res, 400, dgError('Bad Request', 'text is required'))
    if (text.length > MAX_TEXT_CHARS)
      return json(res, 400, dgError('Bad Request', `text is over the ${MAX_TEXT_CHARS} character limit`))
    if (q.model !== undefined && !q.model.startsWith('aura'))
      return json(res, 400, dgError('Bad Request', `unknown model ${q.model}`))
    if (q.encoding !== 'linear16') return json(res, 400, dgError('Bad Request', 'the fake speaks linear16 only'))
    const container = q.container ?? 'wav'
    if (container !== 'none' && container !== 'wav')
      return json(res, 400, dgError('Bad Request', `container ${container} does not go with linear16`))
    const rate = Number(q.sample_rate ?? 24000)
    if (!TTS_RATES.includes(rate))
      return json(res, 400, dgError('Bad Request', `sample_rate ${q.sample_rate} is not offered for linear16`))
    const speed = Number(q.speed ?? 1)
    if (!(speed >= 0.7 && speed <= 1.5)) return json(res, 400, dgError('Bad Request', 'speed must be 0.7–1.5'))
    const samples = encodeToneText(text, rate, { wordsPerMinute: 150 * speed })
    const audio =
      container === 'wav'
        ? encodeWav(samples, rate)
        : Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength)
    const pace = { ...fake.speak }
    if (pace.firstByteDelayMs > 0) await new Promise((ok) => setTimeout(ok, pace.firstByteDelayMs))
    if (res.destroyed) return
    // Chunked, no content-length: the client reads the audio as it is written.
    res.writeHead(200, {
      'content-type': container === 'wav' ? 'audio/wav' : 'application/octet-stream',
      'dg-request-id': randomUUID(),
      'dg-model-name': q.model ?? 'aura-asteria-en',
      'dg-char-count': String(text.length),
    })
    const size = Math.max(1, Math.floor(pace.chunkBytes))
    for (let o = 0; o < audio.length; o += size) {
      if (res.destroyed) return
      res.write(audio.subarray(o, o + size))
      if (pace.chunkIntervalMs > 0) await new Promise((ok) => setTimeout(ok, pace.chunkIntervalMs))
    }
    if (!res.destroyed) res.end()
  }

  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://fake.invalid')
      const q = query(url)
      const body = await readBody(req)
      const contentType = req.headers['content-type'] ?? ''
      let parsed: unknown = null
      if (body && contentType.startsWith('application/json'))
        try {
          parsed = JSON.parse(body.toString('utf8'))
        } catch {
          parsed = undefined
        }
      fake.requests.push({
        method: req.method ?? '',
        path: url.pathname,
        query: q,
        authorization: req.headers.authorization,
        traceparent: req.headers.traceparent as string | undefined,
        contentType,
        bytes: body?.length ?? -1,
        json: parsed,
        upgrade: false,
      })
      if (!authorized(req)) return json(res, 401, dgError('INVALID_AUTH', 'Invalid credentials.'))
      const failure = failures.shift()
      if (failure) return json(res, failure[0], failure[1])
      if (!body) return json(res, 413, dgError('PAYLOAD_TOO_LARGE', 'request body too large'))
      if (parsed === undefined) return json(res, 400, dgError('Bad Request', 'invalid JSON'))
      if (req.method === 'POST' && url.pathname === '/v1/listen') return listenPrerecorded(req, res, q, body)
      if (req.method === 'POST' && url.pathname === '/v1/speak') return await speak(res, q, parsed)
      json(res, 404, dgError('NOT_FOUND', `no route ${req.method} ${url.pathname}`))
    } catch (e) {
      if (!res.headersSent) json(res, 500, dgError('INTERNAL', String(e)))
      else res.destroy()
    }
  })

  // A refused handshake answers plain HTTP, with the reason in dg-error as Deepgram documents.
  const refuse = (socket: Duplex, status: number, body: unknown) => {
    const bytes = Buffer.from(JSON.stringify(body))
    const reason = (body as { err_msg?: unknown })?.err_msg
    socket.end(
      [
        `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
        'content-type: application/json',
        `content-length: ${bytes.length}`,
        `dg-request-id: ${randomUUID()}`,
        ...(typeof reason === 'string' ? [`dg-error: ${reason}`] : []),
        'connection: close',
        '',
        '',
      ].join('\r\n') + bytes.toString('utf8'),
    )
  }

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {})
    const url = new URL(req.url ?? '/', 'http://fake.invalid')
    const q = query(url)
    fake.requests.push({
      method: req.method ?? '',
      path: url.pathname,
      query: q,
      authorization: req.headers.authorization,
      traceparent: req.headers.traceparent as string | undefined,
      contentType: '',
      bytes: 0,
      json: null,
      upgrade: true,
    })
    if (url.pathname !== '/v1/listen') return refuse(socket, 404, dgError('NOT_FOUND', 'no such socket'))
    if (!authorized(req)) return refuse(socket, 401, dgError('INVALID_AUTH', 'Invalid credentials.'))
    const failure = failures.shift()
    if (failure) return refuse(socket, failure[0], failure[1])
    const invalid = refuseLiveQuery(q)
    if (invalid) return refuse(socket, 400, dgError('Bad Request', invalid))
    wss.handleUpgrade(req, socket, head, (ws) => {
      const record: FakeDeepgramSocket = {
        query: q,
        authorization: req.headers.authorization,
        audioBytes: 0,
        controls: [],
        sent: [],
        closed: null,
        drop: (code = 1011, reason = 'NET-0000: the fake dropped the socket') => session.serverClose(code, reason),
      }
      const session = new LiveSession(ws, record, idleTimeoutMs)
      fake.sockets.push(record)
      sessions.add(session)
      ws.on('close', () => sessions.delete(session))
    })
  })

  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return fake
}
