// Any OpenAI-compatible speech server (OpenAI, and self-hosted ones speaking /audio/transcriptions and
// /audio/speech). Settings are read at call time, not at import, so tests and operators can point it
// elsewhere without a rebuild. SPEECH_TIMEOUT_MS (default 30000) bounds each request, body included; a
// streamed synthesis is bounded by the time spent waiting on the server, not by how slowly its audio is played.
import { checkSpeechRate, decodeWav, encodeWav, resample, StreamResampler } from '~/lib/audio'
import { defineSpeechProvider, type Pcm, type SynthesisOptions } from '~/kit/speech'
import { clientSpan, providerCall } from '~/kit/tracing'

const NAME = 'openai'
const DEFAULT_TIMEOUT_MS = 30_000
// OpenAI's own input ceiling for /audio/speech.
const MAX_TEXT_CHARS = 4096
const MAX_RESPONSE_BYTES = 20 * 1024 * 1024
// OpenAI refuses uploads over 25 MB; failing here names the cause instead of a bare 413.
const MAX_UPLOAD_BYTES = 25 * 1024 * 1024
// response_format "pcm": raw 16-bit little-endian mono samples at 24 kHz, no header (OpenAI's speech guide).
const PCM_RATE = 24000
// An error answer is a short JSON message; more than this is not read.
const MAX_ERROR_BYTES = 64 * 1024

const settings = () => {
  const timeout = Number(process.env.SPEECH_TIMEOUT_MS)
  return {
    baseUrl: (process.env.SPEECH_BASE_URL || 'https://api.openai.com/v1').replace(/\/+$/, ''),
    apiKey: process.env.SPEECH_API_KEY || '',
    sttModel: process.env.SPEECH_STT_MODEL || 'whisper-1',
    ttsModel: process.env.SPEECH_TTS_MODEL || 'tts-1',
    timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_TIMEOUT_MS,
  }
}
type Settings = ReturnType<typeof settings>

const fail = (what: string, detail: string): never => {
  throw new Error(`[speech] [${NAME}] ${what} failed (${detail})`)
}

/**
 * One POST, its answer read whole up to MAX_RESPONSE_BYTES. Plain fetch rather than ofetch: the body is
 * counted as it streams so an oversized answer is cut off, not buffered first. No retry: a caller on the
 * line is waiting, and a retried TTS request doubles the silence.
 */
async function post(s: Settings, path: string, body: FormData | string, signal?: AbortSignal): Promise<Uint8Array> {
  const url = `${s.baseUrl}${path}`
  const what = `POST ${url}`
  const timeout = AbortSignal.timeout(s.timeoutMs)
  const both = signal ? AbortSignal.any([signal, timeout]) : timeout
  const headers: Record<string, string> = {}
  if (s.apiKey) headers.authorization = `Bearer ${s.apiKey}`
  if (typeof body === 'string') headers['content-type'] = 'application/json'
  // Messages can echo what the server saw; the key never goes into an error.
  const redact = (m: string) => (s.apiKey ? m.split(s.apiKey).join('[redacted]') : m)
  const cause = (e: unknown) => {
    // The caller's own abort passes through untouched, so the host can tell it from a failure.
    if (signal?.aborted) throw signal.reason
    if (timeout.aborted) return fail(what, `no response within ${s.timeoutMs} ms`)
    return fail(what, `no response: ${redact(e instanceof Error ? e.message : String(e))}`)
  }
  let res: Response
  try {
    // decisions "Tracing": the span covers the request up to the answer's headers.
    res = await clientSpan(
      `${NAME} ${path}`,
      providerCall(NAME, path),
      (trace) => fetch(url, { method: 'POST', headers: { ...headers, ...trace }, body, signal: both }),
      (r) => r.status,
    )
  } catch (e) {
    return cause(e)
  }
  const declared = Number(res.headers.get('content-length'))
  if (declared > MAX_RESPONSE_BYTES) {
    await res.body?.cancel().catch(() => {})
    return fail(what, `HTTP ${res.status}, answer of ${declared} bytes is over the ${MAX_RESPONSE_BYTES} limit`)
  }
  const chunks: Uint8Array[] = []
  let total = 0
  let over = false
  try {
    if (res.body)
      for await (const chunk of res.body) {
        total += chunk.byteLength
        // Leaving the loop cancels the stream, so the rest is never downloaded.
        if (total > MAX_RESPONSE_BYTES) {
          over = true
          break
        }
        chunks.push(chunk)
      }
  } catch (e) {
    return cause(e)
  }
  if (over) return fail(what, `HTTP ${res.status}, answer over the ${MAX_RESPONSE_BYTES} byte limit`)
  const bytes = Buffer.concat(chunks)
  if (!res.ok) return fail(what, httpError(res.status, bytes, redact))
  return bytes
}

/** "HTTP 500: the server's own message", cut short, the key redacted. */
function httpError(status: number, bytes: Buffer, redact: (m: string) => string): string {
  let message = ''
  try {
    const j = JSON.parse(bytes.toString('utf8'))
    message = typeof j?.error === 'string' ? j.error : String(j?.error?.message ?? '')
  } catch {
    message = bytes.toString('utf8')
  }
  message = redact(message.replace(/\s+/g, ' ').trim().slice(0, 200))
  return `HTTP ${status}${message ? `: ${message}` : ''}`
}

/**
 * One POST whose answer is read as it arrives, chunk by chunk. The time spent waiting on the server (for
 * the answer, then for each chunk) is bounded by SPEECH_TIMEOUT_MS in all; the time the caller takes
 * between chunks (playing them) is not counted, so a long utterance played in real time is not cut off.
 * The size is bounded by MAX_RESPONSE_BYTES; the caller's signal aborts and passes through as is. `refuse`
 * names what is wrong with a successful answer that cannot be read as a stream, or answers null.
 */
async function* postStream(
  s: Settings,
  path: string,
  body: string,
  signal: AbortSignal | undefined,
  refuse: (res: Response) => string | null,
): AsyncGenerator<Uint8Array> {
  const url = `${s.baseUrl}${path}`
  const what = `POST ${url}`
  const redact = (m: string) => (s.apiKey ? m.split(s.apiKey).join('[redacted]') : m)
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (s.apiKey) headers.authorization = `Bearer ${s.apiKey}`
  // Our own timer aborts this controller; the caller's signal is joined to it for the request.
  const timer = new AbortController()
  const both = signal ? AbortSignal.any([signal, timer.signal]) : timer.signal
  let waited = 0
  let expired = false
  const wait = async <T>(step: () => Promise<T>): Promise<T> => {
    const started = performance.now()
    const t = setTimeout(
      () => {
        expired = true
        timer.abort(new Error('timeout'))
      },
      Math.max(0, s.timeoutMs - waited),
    )
    try {
      return await step()
    } finally {
      clearTimeout(t)
      waited += performance.now() - started
    }
  }
  let status = 0
  const cause = (e: unknown) => {
    if (signal?.aborted) throw signal.reason
    if (expired)
      return fail(
        what,
        status
          ? `HTTP ${status}, answer not finished within ${s.timeoutMs} ms`
          : `no response within ${s.timeoutMs} ms`,
      )
    const message = redact(e instanceof Error ? e.message : String(e))
    return fail(what, status ? `HTTP ${status}, answer broke off: ${message}` : `no response: ${message}`)
  }
  let res: Response
  try {
    res = await wait(() =>
      clientSpan(
        `${NAME} ${path}`,
        providerCall(NAME, path),
        (trace) => fetch(url, { method: 'POST', headers: { ...headers, ...trace }, body, signal: both }),
        (r) => r.status,
      ),
    )
  } catch (e) {
    return cause(e)
  }
  status = res.status
  const reader = res.body?.getReader()
  try {
    const declared = Number(res.headers.get('content-length'))
    if (declared > MAX_RESPONSE_BYTES)
      return fail(what, `HTTP ${status}, answer of ${declared} bytes is over the ${MAX_RESPONSE_BYTES} limit`)
    const refused = res.ok ? refuse(res) : null
    if (refused) return fail(what, `HTTP ${status}, ${refused}`)
    const limit = res.ok ? MAX_RESPONSE_BYTES : MAX_ERROR_BYTES
    const kept: Uint8Array[] = []
    let total = 0
    while (reader) {
      let next: ReadableStreamReadResult<Uint8Array>
      try {
        next = await wait(() => reader.read())
      } catch (e) {
        return cause(e)
      }
      if (next.done) break
      total += next.value.byteLength
      if (res.ok) {
        if (total > limit) return fail(what, `HTTP ${status}, answer over the ${limit} byte limit`)
        yield next.value
      } else if (total <= limit) kept.push(next.value)
      else break
    }
    if (!res.ok) return fail(what, httpError(status, Buffer.concat(kept), redact))
  } finally {
    // Leaving early (an error, the caller's break) must not leave the download running.
    timer.abort()
    await reader?.cancel().catch(() => {})
  }
}

// The API takes an ISO-639-1 code: "en-US" is sent as "en"; anything unparseable is left to auto-detection.
const languageCode = (language: string | null | undefined) => {
  const code = language?.split(/[-_]/)[0]?.toLowerCase()
  return code && /^[a-z]{2,3}$/.test(code) ? code : null
}

export default defineSpeechProvider({
  name: NAME,
  async transcribe(audio, opts) {
    // Servers refuse empty uploads with a 400; an empty utterance simply says nothing.
    if (audio.samples.length === 0) return { text: '', confidence: null }
    const s = settings()
    const wav = encodeWav(audio.samples, audio.sampleRate)
    if (wav.length > MAX_UPLOAD_BYTES)
      throw new Error(
        `[speech] [${NAME}] utterance of ${wav.length} bytes is over the ${MAX_UPLOAD_BYTES} upload limit`,
      )
    const form = new FormData()
    form.append('file', new Blob([new Uint8Array(wav)], { type: 'audio/wav' }), 'utterance.wav')
    form.append('model', s.sttModel)
    form.append('response_format', 'json')
    const language = languageCode(opts?.language)
    if (language) form.append('language', language)
    const bytes = await post(s, '/audio/transcriptions', form, opts?.signal)
    let answer: unknown
    try {
      answer = JSON.parse(Buffer.from(bytes).toString('utf8'))
    } catch {
      throw new Error(`[speech] [${NAME}] the /audio/transcriptions answer is not JSON`)
    }
    const text = (answer as { text?: unknown } | null)?.text
    if (typeof text !== 'string') throw new Error(`[speech] [${NAME}] the /audio/transcriptions answer holds no text`)
    // The json format carries no confidence (verbose_json has per-segment log-probabilities, not one score).
    return { text: text.trim(), confidence: null }
  },
  async synthesize(text, opts): Promise<Pcm> {
    checkText(text)
    // The API refuses empty input; nothing to say is no audio.
    if (!text.trim()) return { samples: new Int16Array(0), sampleRate: opts.sampleRate }
    const s = settings()
    const bytes = await post(s, '/audio/speech', speechBody(s, text, opts, 'wav'), opts.signal)
    let pcm: { samples: Int16Array; sampleRate: number }
    try {
      pcm = decodeWav(bytes)
      // A rate outside 8–48 kHz is refused before resampling, which would expand it without bound.
      checkSpeechRate(pcm.sampleRate)
    } catch (e) {
      throw new Error(`[speech] [${NAME}] the /audio/speech answer is not a usable WAV: ${(e as Error).message}`)
    }
    return { samples: resample(pcm.samples, pcm.sampleRate, opts.sampleRate), sampleRate: opts.sampleRate }
  },
  // Raw PCM rather than WAV: no header to wait for, and every byte that arrives is playable audio.
  async *synthesizeStream(text, opts) {
    checkText(text)
    if (!text.trim()) return
    const s = settings()
    const resampler = new StreamResampler(PCM_RATE, opts.sampleRate)
    const decode = pcm16Decoder()
    const chunks = postStream(s, '/audio/speech', speechBody(s, text, opts, 'pcm'), opts.signal, (res) => {
      // A server that ignores response_format answers a container or an error document instead.
      const type = res.headers.get('content-type') ?? ''
      return /^(application\/json|text\/|audio\/(x-)?wav|audio\/mpeg)/i.test(type)
        ? `the answer is ${type.split(';')[0]}, not raw PCM`
        : null
    })
    for await (const bytes of chunks) {
      const out = resampler.push(decode(bytes))
      opts.signal?.throwIfAborted()
      if (out.length) yield out
    }
    const tail = resampler.flush()
    if (tail.length) yield tail
  },
})

/** Little-endian PCM16 from bytes that arrive in pieces: a sample split across two pieces is joined. */
function pcm16Decoder() {
  let carry = -1
  return (bytes: Uint8Array): Int16Array => {
    const joined = carry < 0 ? 0 : 1
    const out = new Int16Array((bytes.byteLength + joined) >> 1)
    let i = 0
    let o = 0
    if (joined && bytes.byteLength) {
      out[o++] = ((carry | (bytes[0] << 8)) << 16) >> 16
      carry = -1
      i = 1
    }
    for (; i + 1 < bytes.byteLength; i += 2) out[o++] = ((bytes[i] | (bytes[i + 1] << 8)) << 16) >> 16
    if (i < bytes.byteLength) carry = bytes[i]
    return out
  }
}

function checkText(text: string) {
  if (text.length > MAX_TEXT_CHARS)
    throw new Error(`[speech] [${NAME}] text of ${text.length} characters is over the ${MAX_TEXT_CHARS} limit`)
}

const speechBody = (s: Settings, text: string, opts: SynthesisOptions, format: 'wav' | 'pcm') =>
  JSON.stringify({
    model: s.ttsModel,
    input: text,
    voice: opts.voice ?? 'alloy',
    speed: Math.min(2, Math.max(0.5, opts.speakingRate || 1)),
    response_format: format,
  })
