// Deepgram: pre-recorded and live transcription (/v1/listen over HTTP and WebSocket) and synthesis (/v1/speak,
// the audio body read as it streams). Settings are read at call time, like the openai provider: DEEPGRAM_API_KEY,
// DEEPGRAM_BASE_URL (default https://api.deepgram.com; the WebSocket URL is derived from it), DEEPGRAM_STT_MODEL
// (nova-3), DEEPGRAM_TTS_MODEL (aura-2-thalia-en), DEEPGRAM_FINALIZE_TIMEOUT_MS (1000), DEEPGRAM_KEEPALIVE_MS
// (3000); SPEECH_TIMEOUT_MS (30000) bounds each HTTP request, body included, and each WebSocket handshake.
//
// The protocol as documented by Deepgram:
//   live /v1/listen parameters, interim results https://developers.deepgram.com/docs/interim-results
//   Results, as the JS SDK types it             https://app.unpkg.com/@deepgram/sdk@4.11.2/files/src/lib/types/LiveTranscriptionEvent.ts
//   endpointing and interim results             https://developers.deepgram.com/docs/understand-endpointing-interim-results
//   UtteranceEnd (utterance_end_ms)             https://developers.deepgram.com/docs/utterance-end
//   Finalize, from_finalize                     https://developers.deepgram.com/docs/finalize
//   KeepAlive (10 s idle close, NET-0001)       https://developers.deepgram.com/docs/audio-keep-alive
//   CloseStream, Metadata                       https://developers.deepgram.com/docs/close-stream
//   handshake errors in dg-error                https://developers.deepgram.com/changelog/2022/11/8
//   raw audio needs encoding and sample_rate    https://developers.deepgram.com/docs/sample-rate
//   pre-recorded POST /v1/listen, a WAV body    https://developers.deepgram.com/docs/pre-recorded-audio
//   POST /v1/speak and its query                https://developers.deepgram.com/reference/text-to-speech/speak-request
//   linear16 rates, container none              https://developers.deepgram.com/docs/tts-media-output-settings
//   speed (0.7–1.5)                             https://developers.deepgram.com/docs/tts-voice-controls
//   audio body streamed as it is made           https://developers.deepgram.com/docs/streaming-the-audio-output
import WebSocket from 'ws'
import { encodeWav, resample } from '~/lib/audio'
import {
  defineSpeechProvider,
  type ListenOptions,
  type LiveTranscription,
  type Pcm,
  type SynthesisOptions,
  type TranscriptEvent,
} from '~/kit/speech'
import { clientSpan, injectTraceHeaders, providerCall } from '~/kit/tracing'

const NAME = 'deepgram'
const DEFAULT_TIMEOUT_MS = 30_000
const DEFAULT_FINALIZE_TIMEOUT_MS = 1000
// The server closes a socket that heard neither audio nor KeepAlive for 10 s; the docs ask for one every 3–5 s.
const DEFAULT_KEEPALIVE_MS = 3000
// Deepgram's per-request text limit for /v1/speak.
const MAX_TEXT_CHARS = 2000
// 2,000 characters at the slowest speed and 48 kHz come to about 20 MB of PCM16.
const MAX_AUDIO_BYTES = 32 * 1024 * 1024
// A transcript answer with per-word timings for a long utterance is tens of kilobytes.
const MAX_ANSWER_BYTES = 2 * 1024 * 1024
const MAX_ERROR_BYTES = 64 * 1024
// The host sends utterances of seconds; an upload this large is a bug upstream, not speech.
const MAX_UPLOAD_BYTES = 25 * 1024 * 1024
// Server messages are small JSON; a bigger one is refused by ws rather than buffered.
const MAX_MESSAGE_BYTES = 1024 * 1024
// Audio held while the socket opens; older audio is dropped first (a caller still waiting on a handshake after
// this long has lost the start of the utterance anyway).
const MAX_PENDING_SECONDS = 10
// Audio queued in the socket but not yet written to the network: more means the connection has stalled.
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024
// After CloseStream the server flushes and closes; it gets this long before the socket is cut.
const CLOSE_GRACE_MS = 2000
// Rates /v1/speak produces for linear16 (the audio format combinations table); others are resampled here.
const TTS_RATES = [8000, 16000, 24000, 32000, 48000]
// The documented range of the speed parameter.
const MIN_SPEED = 0.7
const MAX_SPEED = 1.5

const positive = (raw: string | undefined, fallback: number) => {
  const n = Number(raw)
  return Number.isFinite(n) && n > 0 ? n : fallback
}

const settings = () => {
  // One base URL serves both protocols; a trailing /v1 is tolerated since every path below starts with it.
  const base = (process.env.DEEPGRAM_BASE_URL || 'https://api.deepgram.com').replace(/\/+$/, '').replace(/\/v1$/, '')
  const httpUrl = base.replace(/^ws(s?):/i, 'http$1:')
  return {
    httpUrl,
    wsUrl: httpUrl.replace(/^http(s?):/i, 'ws$1:'),
    apiKey: process.env.DEEPGRAM_API_KEY || '',
    sttModel: process.env.DEEPGRAM_STT_MODEL || 'nova-3',
    ttsModel: process.env.DEEPGRAM_TTS_MODEL || 'aura-2-thalia-en',
    timeoutMs: positive(process.env.SPEECH_TIMEOUT_MS, DEFAULT_TIMEOUT_MS),
    finalizeTimeoutMs: positive(process.env.DEEPGRAM_FINALIZE_TIMEOUT_MS, DEFAULT_FINALIZE_TIMEOUT_MS),
    keepAliveMs: positive(process.env.DEEPGRAM_KEEPALIVE_MS, DEFAULT_KEEPALIVE_MS),
  }
}
type Settings = ReturnType<typeof settings>

const fail = (what: string, detail: string): never => {
  throw new Error(`[speech] [${NAME}] ${what} failed (${detail})`)
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e))

// Servers can echo what they saw; the key never goes into a message.
const redactor = (key: string) => (m: string) => (key ? m.split(key).join('[redacted]') : m)

const oneLine = (m: string) => m.replace(/\s+/g, ' ').trim().slice(0, 200)

const headers = (s: Settings, extra: Record<string, string> = {}): Record<string, string> =>
  s.apiKey ? { ...extra, authorization: `Token ${s.apiKey}` } : extra

// Deepgram takes BCP-47 tags ("en", "en-US"); anything else is left to the model's default.
const languageTag = (language: string | null | undefined) =>
  language && /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(language) ? language : null

// ---------------------------------------------------------------------------------------------------------
// HTTP: one POST, its time bounded from the request to the last byte of the body.

interface Exchange {
  what: string
  signal: AbortSignal
  /** Turns a fetch or read failure into the error to throw; the caller's own abort passes through as is. */
  cause(e: unknown): never
  redact(m: string): string
}

function exchange(s: Settings, path: string, signal?: AbortSignal): Exchange {
  const what = `POST ${s.httpUrl}${path}`
  const timeout = AbortSignal.timeout(s.timeoutMs)
  const redact = redactor(s.apiKey)
  return {
    what,
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    redact,
    cause: (e) => {
      if (signal?.aborted) throw signal.reason
      if (timeout.aborted) return fail(what, `no complete answer within ${s.timeoutMs} ms`)
      return fail(what, `no response: ${redact(messageOf(e))}`)
    },
  }
}

/** The body's chunks as they arrive, cut off past `max` bytes. Leaving the loop early cancels the body. */
async function* bodyChunks(x: Exchange, res: Response, max: number, status: string): AsyncGenerator<Uint8Array> {
  const declared = Number(res.headers.get('content-length'))
  if (declared > max) {
    await res.body?.cancel().catch(() => {})
    fail(x.what, `${status}, answer of ${declared} bytes is over the ${max} limit`)
  }
  if (!res.body) return
  let total = 0
  try {
    for await (const chunk of res.body) {
      total += chunk.byteLength
      if (total > max) break
      yield chunk
    }
  } catch (e) {
    x.cause(e)
  }
  if (total > max) fail(x.what, `${status}, answer over the ${max} byte limit`)
}

async function readAll(x: Exchange, res: Response, max: number): Promise<Buffer> {
  const chunks: Uint8Array[] = []
  for await (const chunk of bodyChunks(x, res, max, `HTTP ${res.status}`)) chunks.push(chunk)
  return Buffer.concat(chunks)
}

/** Sends the request; answers the response of a 2xx, else throws naming the status and Deepgram's message. */
async function post(
  x: Exchange,
  url: string,
  init: { headers: Record<string, string>; body: Uint8Array<ArrayBuffer> | string },
): Promise<Response> {
  let res: Response
  try {
    // No retry: a caller on the line is waiting, and a retried request doubles the silence.
    // decisions "Tracing": named by the operation (the URL's path), never the query; up to the answer's headers.
    const operation = new URL(url).pathname
    res = await clientSpan(
      `${NAME} ${operation}`,
      providerCall(NAME, operation),
      (trace) =>
        fetch(url, { method: 'POST', headers: { ...init.headers, ...trace }, body: init.body, signal: x.signal }),
      (r) => r.status,
    )
  } catch (e) {
    return x.cause(e)
  }
  if (res.ok) return res
  const bytes = await readAll(x, res, MAX_ERROR_BYTES)
  let message = ''
  try {
    // REST errors carry err_code/err_msg; some answers use category/message instead.
    const j = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>
    const code = j.err_code ?? j.category
    const text = j.err_msg ?? j.message ?? j.reason ?? j.error
    message = [code, text].filter((v) => typeof v === 'string' && v).join(': ')
  } catch {
    message = bytes.toString('utf8')
  }
  message = x.redact(oneLine(message))
  return fail(x.what, `HTTP ${res.status}${message ? `: ${message}` : ''}`)
}

// ---------------------------------------------------------------------------------------------------------
// PCM16 little-endian bytes to samples, across chunks that may split a sample.

class Pcm16Reader {
  private carry = -1

  push(chunk: Uint8Array): Int16Array {
    if (chunk.byteLength === 0) return new Int16Array(0)
    const held = this.carry >= 0 ? 1 : 0
    const out = new Int16Array((chunk.byteLength + held) >> 1)
    let i = 0
    let k = 0
    if (held && out.length) {
      out[k++] = ((this.carry | (chunk[i++] << 8)) << 16) >> 16
      this.carry = -1
    }
    for (; k < out.length; k++, i += 2) out[k] = ((chunk[i] | (chunk[i + 1] << 8)) << 16) >> 16
    if (i < chunk.byteLength) this.carry = chunk[i]
    return out
  }
}

// ---------------------------------------------------------------------------------------------------------
// Synthesis

/** The rate to ask /v1/speak for: the leg's own when Deepgram makes it, else the next one up (then resampled). */
const ttsRate = (wanted: number) => (TTS_RATES.includes(wanted) ? wanted : (TTS_RATES.find((r) => r > wanted) ?? 48000))

/** The /v1/speak request for `text`, or null when there is nothing to say. Refuses text over the limit first. */
async function speak(text: string, opts: SynthesisOptions) {
  if (text.length > MAX_TEXT_CHARS)
    throw new Error(`[speech] [${NAME}] text of ${text.length} characters is over the ${MAX_TEXT_CHARS} limit`)
  // Deepgram refuses empty text; nothing to say is no audio.
  if (!text.trim()) return null
  opts.signal?.throwIfAborted()
  const s = settings()
  const rate = ttsRate(opts.sampleRate)
  // Deepgram's voice is its model (aura-2-<name>-<lang>); voice ids of other catalogues mean the default.
  const model = opts.voice && /^aura-/.test(opts.voice) ? opts.voice : s.ttsModel
  const query = new URLSearchParams({ model, encoding: 'linear16', sample_rate: String(rate), container: 'none' })
  const speed = Math.min(MAX_SPEED, Math.max(MIN_SPEED, opts.speakingRate || 1))
  // Left out at 1: the parameter is young, and a model without it must still answer.
  if (speed !== 1) query.set('speed', String(speed))
  const x = exchange(s, '/v1/speak', opts.signal)
  const res = await post(x, `${s.httpUrl}/v1/speak?${query}`, {
    headers: headers(s, { 'content-type': 'application/json' }),
    body: JSON.stringify({ text }),
  })
  return { x, res, rate }
}

async function synthesize(text: string, opts: SynthesisOptions): Promise<Pcm> {
  const call = await speak(text, opts)
  if (!call) return { samples: new Int16Array(0), sampleRate: opts.sampleRate }
  // A trailing odd byte would be half a sample; the reader drops it.
  const samples = new Pcm16Reader().push(await readAll(call.x, call.res, MAX_AUDIO_BYTES))
  return {
    samples: call.rate === opts.sampleRate ? samples : resample(samples, call.rate, opts.sampleRate),
    sampleRate: opts.sampleRate,
  }
}

async function* synthesizeStream(text: string, opts: SynthesisOptions): AsyncGenerator<Int16Array> {
  // Resampling piece by piece would click at every seam and drift from synthesize()'s answer; the host's legs
  // (8 and 16 kHz) are rates Deepgram makes, so only odd rates take the whole answer at once.
  if (ttsRate(opts.sampleRate) !== opts.sampleRate) {
    const pcm = await synthesize(text, opts)
    opts.signal?.throwIfAborted()
    if (pcm.samples.length) yield pcm.samples
    return
  }
  const call = await speak(text, opts)
  if (!call) return
  const reader = new Pcm16Reader()
  for await (const chunk of bodyChunks(call.x, call.res, MAX_AUDIO_BYTES, `HTTP ${call.res.status}`)) {
    const samples = reader.push(chunk)
    if (samples.length) yield samples
    // The consumer may have aborted while holding the last chunk: stop before reading on.
    opts.signal?.throwIfAborted()
  }
}

// ---------------------------------------------------------------------------------------------------------
// Live transcription over the /v1/listen WebSocket.

interface ResultsMessage {
  type: 'Results'
  is_final?: boolean
  speech_final?: boolean
  from_finalize?: boolean
  channel?: { alternatives?: { transcript?: unknown; confidence?: unknown }[] }
}

const toBytes = (pcm: Int16Array) => {
  const out = Buffer.allocUnsafe(pcm.length * 2)
  for (let i = 0; i < pcm.length; i++) out.writeInt16LE(pcm[i], i * 2)
  return out
}

const confidenceOf = (v: unknown) => (typeof v === 'number' && v >= 0 && v <= 1 ? v : null)

function listen(opts: ListenOptions): LiveTranscription {
  const s = settings()
  const redact = redactor(s.apiKey)
  const endpointing =
    Number.isFinite(opts.endOfSpeechMs) && opts.endOfSpeechMs > 0 ? Math.round(opts.endOfSpeechMs) : 600
  const query = new URLSearchParams({
    model: s.sttModel,
    encoding: 'linear16',
    sample_rate: String(opts.sampleRate),
    channels: '1',
    interim_results: 'true',
    endpointing: String(endpointing),
    // Deepgram refuses less than 1000 ms here.
    utterance_end_ms: String(Math.max(1000, endpointing)),
    vad_events: 'true',
    smart_format: 'true',
    punctuate: 'true',
  })
  const language = languageTag(opts.language)
  if (language) query.set('language', language)
  const endpoint = `${s.wsUrl}/v1/listen`

  // connecting → open → done; done is final (closed by the host, or failed) and nothing is emitted after it.
  let state: 'connecting' | 'open' | 'done' = 'connecting'
  const pending: { data: Buffer | string; audio: boolean }[] = []
  let pendingAudioBytes = 0
  const maxPendingBytes = Math.max(1, opts.sampleRate) * 2 * MAX_PENDING_SECONDS
  let lastSent = Date.now()
  const finalizeWaiters = new Set<() => void>()
  let ws: WebSocket | null = null

  const emit = (event: TranscriptEvent) => {
    if (state === 'done') return
    try {
      opts.onEvent(event)
    } catch {
      // The host's handler failing is the host's to report; it must not take the socket down with it.
    }
  }
  const settleFinalize = () => {
    for (const resolve of [...finalizeWaiters]) resolve()
  }
  const stop = () => {
    state = 'done'
    clearInterval(keepAlive)
    settleFinalize()
  }
  const failWith = (detail: string) => {
    if (state === 'done') return
    emit({ type: 'error', message: `[speech] [${NAME}] ${endpoint} ${redact(detail)}` })
    stop()
    ws?.terminate()
  }
  const sendNow = (data: Buffer | string) => {
    if (!ws || ws.readyState !== WebSocket.OPEN) return
    if (ws.bufferedAmount > MAX_BUFFERED_BYTES)
      return failWith(`failed (the socket is not draining: ${ws.bufferedAmount} bytes queued)`)
    ws.send(data)
    lastSent = Date.now()
  }
  const enqueue = (data: Buffer | string, audio: boolean) => {
    if (state === 'done') return
    if (state === 'open') return sendNow(data)
    pending.push({ data, audio })
    if (!audio) return
    pendingAudioBytes += data.length
    while (pendingAudioBytes > maxPendingBytes) {
      const oldest = pending.findIndex((p) => p.audio)
      pendingAudioBytes -= pending[oldest].data.length
      pending.splice(oldest, 1)
    }
  }
  const control = (type: 'KeepAlive' | 'Finalize' | 'CloseStream') => JSON.stringify({ type })

  const keepAlive = setInterval(
    () => {
      if (state === 'open' && Date.now() - lastSent >= s.keepAliveMs) sendNow(control('KeepAlive'))
    },
    Math.max(50, Math.round(s.keepAliveMs / 3)),
  )
  keepAlive.unref()

  const onMessage = (raw: WebSocket.RawData, isBinary: boolean) => {
    if (state === 'done' || isBinary) return
    let msg: { type?: unknown } & Record<string, unknown>
    try {
      msg = JSON.parse(raw.toString())
    } catch {
      return
    }
    if (msg.type === 'Results') {
      const r = msg as unknown as ResultsMessage
      const alternative = r.channel?.alternatives?.[0]
      const text = typeof alternative?.transcript === 'string' ? alternative.transcript.trim() : ''
      if (r.is_final) {
        // An empty final still matters when it carries speech_final: the speaker stopped after the last words.
        if (text || r.speech_final)
          emit({
            type: 'final',
            text,
            confidence: text ? confidenceOf(alternative?.confidence) : null,
            endOfUtterance: r.speech_final === true,
          })
      } else if (text) emit({ type: 'interim', text })
      // The answer to Finalize: its words were delivered just above.
      if (r.from_finalize === true) settleFinalize()
    } else if (msg.type === 'UtteranceEnd') emit({ type: 'utterance_end' })
    // An Error message is not in the pages above; should a server send one, the session is over, not silently on.
    else if (msg.type === 'Error') {
      const detail = [msg.variant, msg.description ?? msg.message].filter((v) => typeof v === 'string' && v).join(': ')
      failWith(`failed (${oneLine(detail || 'error message from the server')})`)
    }
    // SpeechStarted and Metadata carry nothing the host asks for.
  }

  try {
    ws = new WebSocket(`${endpoint}?${query}`, {
      // The streaming session continues the call's trace (its handshake carries traceparent).
      headers: injectTraceHeaders(headers(s)),
      handshakeTimeout: s.timeoutMs,
      maxPayload: MAX_MESSAGE_BYTES,
      perMessageDeflate: false,
    })
  } catch (e) {
    // A malformed URL throws here; the host still hears of it as its one error event, after listen() returns.
    queueMicrotask(() => failWith(`failed (${messageOf(e)})`))
  }
  if (ws) {
    const socket = ws
    socket.on('open', () => {
      if (state === 'done') return
      state = 'open'
      for (const p of pending.splice(0)) sendNow(p.data)
      pendingAudioBytes = 0
      lastSent = Date.now()
    })
    socket.on('message', onMessage)
    // The handshake answered something other than 101: Deepgram puts its reason in the dg-error header.
    socket.on('unexpected-response', (_req, res) => {
      const reason = res.headers['dg-error']
      res.resume()
      failWith(`refused the connection (HTTP ${res.statusCode}${reason ? `: ${oneLine(String(reason))}` : ''})`)
    })
    socket.on('error', (e) => failWith(`failed (${messageOf(e)})`))
    socket.on('close', (code, reason) => {
      const why = reason.toString()
      failWith(`closed unexpectedly (code ${code}${why ? `: ${oneLine(why)}` : ''})`)
    })
  }

  return {
    send(pcm) {
      if (state === 'done' || pcm.length === 0) return
      enqueue(toBytes(pcm), true)
    },
    finalize() {
      if (state === 'done') return Promise.resolve()
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer)
          finalizeWaiters.delete(done)
          resolve()
        }
        // Deepgram answers Finalize with from_finalize only when it held audio: the bound covers the rest.
        const timer = setTimeout(done, s.finalizeTimeoutMs)
        finalizeWaiters.add(done)
        enqueue(control('Finalize'), false)
      })
    },
    close() {
      if (state === 'done') return
      const open = state === 'open'
      stop()
      const socket = ws
      if (!socket) return
      if (!open) return void socket.terminate()
      // CloseStream lets Deepgram flush and close on its side; its last messages are no longer wanted.
      try {
        socket.send(control('CloseStream'))
      } catch {
        // Already closing: terminate below covers it.
      }
      const cut = setTimeout(() => socket.terminate(), CLOSE_GRACE_MS)
      cut.unref()
      socket.once('close', () => clearTimeout(cut))
    },
  }
}

// ---------------------------------------------------------------------------------------------------------

export default defineSpeechProvider({
  name: NAME,
  async transcribe(audio, opts) {
    // Deepgram refuses empty uploads; an empty utterance simply says nothing.
    if (audio.samples.length === 0) return { text: '', confidence: null }
    opts?.signal?.throwIfAborted()
    const s = settings()
    const wav = encodeWav(audio.samples, audio.sampleRate)
    if (wav.length > MAX_UPLOAD_BYTES)
      throw new Error(
        `[speech] [${NAME}] utterance of ${wav.length} bytes is over the ${MAX_UPLOAD_BYTES} upload limit`,
      )
    const query = new URLSearchParams({ model: s.sttModel, smart_format: 'true' })
    const language = languageTag(opts?.language)
    if (language) query.set('language', language)
    const x = exchange(s, '/v1/listen', opts?.signal)
    const res = await post(x, `${s.httpUrl}/v1/listen?${query}`, {
      headers: headers(s, { 'content-type': 'audio/wav' }),
      body: new Uint8Array(wav),
    })
    const bytes = await readAll(x, res, MAX_ANSWER_BYTES)
    let answer: unknown
    try {
      answer = JSON.parse(bytes.toString('utf8'))
    } catch {
      throw new Error(`[speech] [${NAME}] the /v1/listen answer is not JSON`)
    }
    const alternative = (
      answer as { results?: { channels?: { alternatives?: { transcript?: unknown; confidence?: unknown }[] }[] } }
    )?.results?.channels?.[0]?.alternatives?.[0]
    if (typeof alternative?.transcript !== 'string')
      throw new Error(`[speech] [${NAME}] the /v1/listen answer holds no transcript`)
    const text = alternative.transcript.trim()
    return { text, confidence: text ? confidenceOf(alternative.confidence) : null }
  },
  synthesize,
  synthesizeStream,
  listen,
})
