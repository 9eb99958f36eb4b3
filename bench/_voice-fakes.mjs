// The providers behind a real-paced voice call, as local fakes with modelled latencies: an OpenAI-compatible
// chat server (/v1/chat/completions, streamed or not), an OpenAI-compatible speech server
// (/v1/audio/transcriptions, /v1/audio/speech streamed as it is "generated") and Twilio's REST Calls API (the
// server hangs calls up through it). Nothing here decodes or understands audio: the bench knows what its caller
// says and tells the speech fake, which answers that as the transcription. Used by bench/voice-turns.mjs.
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'

/** The latency model, from the environment (ms, tokens per second, times real time). */
export function latencyModel(env = process.env) {
  const read = (name, fallback, positive = false) => {
    const raw = env[name]
    if (raw === undefined || raw === '') return fallback
    const n = Number(raw)
    if (!Number.isFinite(n) || n < 0 || (positive && n === 0))
      throw new Error(`${name}=${raw}: expected a ${positive ? 'positive' : 'non-negative'} number`)
    return n
  }
  return {
    sttMs: read('BENCH_STT_MS', 250),
    llmFirstMs: read('BENCH_LLM_FIRST_MS', 400),
    llmTps: read('BENCH_LLM_TPS', 40, true),
    ttsFirstMs: read('BENCH_TTS_FIRST_MS', 200),
    ttsSpeed: read('BENCH_TTS_SPEED', 5, true),
  }
}

/**
 * What the fake model says, one per request in turn: spoken answers of 35 words (14 s at 150 words a minute),
 * each opening with a 10-word sentence, so that a streaming server can start speaking early.
 */
export const ANSWERS = [
  'A puncture repair costs twelve dollars at our Hobart shop. We patch the tube or fit a new one while you wait, and most repairs are done in about twenty minutes, so grab a coffee.',
  'We are open Tuesday to Sunday from nine each morning. On weekdays we close at half past five and on weekends at four, and we are closed on Mondays and on all public holidays too.',
  'Yes, the loyalty code WOMBAT42 gives you ten percent off. It works on any service or repair in the shop, so just mention it when you book or show it to us at the counter.',
  'Our mechanic Barnaby Wobbleton has fixed bikes since nineteen ninety-four. He looks after every service himself, so if you have a tricky problem with gears or brakes he is really the right person to ask.',
]

/** A token is a word with its leading space and attached punctuation. */
export const tokensOf = (text) => text.match(/\s*\S+/g) ?? []

/** Tokens up to and including the one that ends the first sentence. */
export function firstSentenceTokens(text) {
  const tokens = tokensOf(text)
  const end = tokens.findIndex((t) => /[.!?]["')]*$/.test(t))
  return end < 0 ? tokens.length : end + 1
}

/** Speech the fake synthesises: 150 words a minute at speed 1. */
export const WORDS_PER_MINUTE = 150
const TTS_RATE = 24_000
/** How often streamed bodies (tokens aside) are written: small pieces, as a real service sends them. */
const CHUNK_MS = 20
const MAX_BODY = 30 * 1024 * 1024

const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)))

/** The request's JSON body, or undefined after answering 400 as OpenAI does. */
async function readJson(req, res) {
  try {
    return JSON.parse((await readBody(req)).toString('utf8'))
  } catch {
    sendJson(res, 400, { error: { message: 'invalid JSON body', type: 'invalid_request_error' } })
    return undefined
  }
}

function readBody(req) {
  return new Promise((ok, fail) => {
    const chunks = []
    let size = 0
    req.on('data', (c) => {
      size += c.length
      if (size > MAX_BODY) {
        fail(new Error(`request body over ${MAX_BODY} bytes`))
        req.destroy()
      } else chunks.push(c)
    })
    req.on('end', () => ok(Buffer.concat(chunks)))
    req.on('error', fail)
  })
}

const sendJson = (res, status, body) => {
  if (res.destroyed) return
  const bytes = Buffer.from(JSON.stringify(body))
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length }).end(bytes)
}

/** An HTTP server on a free loopback port; a handler that throws answers 500 (the bench then sees why). */
async function serve(handler) {
  const sockets = new Set()
  const server = createServer((req, res) => {
    handler(req, res).catch((err) => sendJson(res, 500, { error: { message: String(err?.message ?? err) } }))
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok))
  return {
    port: server.address().port,
    close: () =>
      new Promise((ok) => {
        for (const s of sockets) s.destroy()
        server.close(() => ok())
      }),
  }
}

/**
 * Runs `step(k)` for k = 0, 1, … at start + k·periodMs on the wall clock, until it answers false. Scheduled by
 * absolute time so that timer lateness does not add up over a long stream.
 */
async function paced(start, periodMs, step) {
  for (let k = 0; ; k++) {
    await sleep(start + k * periodMs - performance.now())
    if ((await step(k)) === false) return
  }
}

// ---- chat -------------------------------------------------------------------------------------------------

/**
 * POST /v1/chat/completions. Streamed (stream: true): Server-Sent Events as OpenAI sends them, the first token
 * llmFirstMs after the request and then llmTps tokens a second, a closing chunk with finish_reason "stop",
 * the usage chunk when stream_options.include_usage asks for it, then [DONE]. Not streamed: the whole
 * completion once every token would have been written.
 */
export async function startFakeChat(model) {
  let next = 0
  const stats = { requests: 0, streamed: 0 }
  const server = await serve(async (req, res) => {
    if (req.method !== 'POST' || !req.url.startsWith('/v1/chat/completions'))
      return sendJson(res, 404, {
        error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error' },
      })
    const t0 = performance.now()
    const body = await readJson(req, res)
    if (body === undefined) return
    if (!Array.isArray(body?.messages) || !body.messages.length)
      return sendJson(res, 400, { error: { message: "'messages' is required", type: 'invalid_request_error' } })
    stats.requests++
    const text = ANSWERS[next++ % ANSWERS.length]
    const tokens = tokensOf(text)
    const id = `chatcmpl-${randomBytes(12).toString('hex')}`
    const created = Math.floor(Date.now() / 1000)
    const name = typeof body.model === 'string' ? body.model : 'gpt-4o-mini'
    const promptTokens = Math.ceil(JSON.stringify(body.messages).length / 4)
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: tokens.length,
      total_tokens: promptTokens + tokens.length,
    }
    const tokenMs = 1000 / model.llmTps
    if (!body.stream) {
      await sleep(t0 + model.llmFirstMs + tokens.length * tokenMs - performance.now())
      return sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model: name,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: text, refusal: null },
            logprobs: null,
            finish_reason: 'stop',
          },
        ],
        usage,
      })
    }
    stats.streamed++
    const withUsage = body.stream_options?.include_usage === true
    const chunk = (choices, extra = {}) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: name, choices, ...(withUsage ? { usage: null } : {}), ...extra })}\n\n`
    let closed = false
    res.on('close', () => {
      closed = true
    })
    // Headers go out at once, as OpenAI's do; the first token is what takes llmFirstMs.
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' })
    res.flushHeaders()
    await paced(t0 + model.llmFirstMs, tokenMs, (k) => {
      if (closed) return false
      const delta = k === 0 ? { role: 'assistant', content: tokens[0] } : { content: tokens[k] }
      res.write(chunk([{ index: 0, delta, logprobs: null, finish_reason: null }]))
      return k + 1 < tokens.length
    })
    if (closed) return
    res.write(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]))
    if (withUsage) res.write(chunk([], { usage }))
    res.end('data: [DONE]\n\n')
  })
  return { url: `http://127.0.0.1:${server.port}/v1`, stats, close: server.close }
}

// ---- speech -----------------------------------------------------------------------------------------------

/** One second of an audible two-tone signal at 24 kHz (whole cycles, so it loops without a click). */
const TONE = (() => {
  const b = Buffer.alloc(TTS_RATE * 2)
  for (let i = 0; i < TTS_RATE; i++) {
    const t = i / TTS_RATE
    b.writeInt16LE(Math.round(5000 * Math.sin(2 * Math.PI * 220 * t) + 3000 * Math.sin(2 * Math.PI * 550 * t)), i * 2)
  }
  return b
})()

/** Samples [from, to) of the looping tone, as PCM16 little-endian bytes. */
function toneBytes(from, to) {
  const out = Buffer.alloc((to - from) * 2)
  let at = 0
  for (let s = from; s < to; ) {
    const inLoop = s % TTS_RATE
    const n = Math.min(to - s, TTS_RATE - inLoop)
    TONE.copy(out, at, inLoop * 2, (inLoop + n) * 2)
    at += n * 2
    s += n
  }
  return out
}

function wavHeader(dataBytes) {
  const h = Buffer.alloc(44)
  h.write('RIFF', 0, 'ascii')
  h.writeUInt32LE(36 + dataBytes, 4)
  h.write('WAVE', 8, 'ascii')
  h.write('fmt ', 12, 'ascii')
  h.writeUInt32LE(16, 16)
  h.writeUInt16LE(1, 20)
  h.writeUInt16LE(1, 22)
  h.writeUInt32LE(TTS_RATE, 24)
  h.writeUInt32LE(TTS_RATE * 2, 28)
  h.writeUInt16LE(2, 32)
  h.writeUInt16LE(16, 34)
  h.write('data', 36, 'ascii')
  h.writeUInt32LE(dataBytes, 40)
  return h
}

/**
 * POST /v1/audio/transcriptions (multipart): `{text}` sttMs after the upload, the text being what the bench
 * last set with `heard(text)`. POST /v1/audio/speech (JSON): 24 kHz mono PCM16 as `wav` (header first, with
 * the data size known up front) or raw `pcm`, words/150 wpm/speed long; the first byte ttsFirstMs after the
 * request, then the body as it is generated at ttsSpeed× real time, written every 20 ms.
 */
export async function startFakeSpeech(model) {
  let heard = ''
  const stats = { transcriptions: 0, syntheses: 0, formats: {} }
  const server = await serve(async (req, res) => {
    const path = req.url.split('?')[0]
    if (req.method === 'POST' && path === '/v1/audio/transcriptions') {
      const type = req.headers['content-type'] ?? ''
      await readBody(req)
      const t0 = performance.now()
      if (!type.startsWith('multipart/form-data'))
        return sendJson(res, 400, { error: { message: 'expected multipart/form-data', type: 'invalid_request_error' } })
      stats.transcriptions++
      const text = heard
      await sleep(t0 + model.sttMs - performance.now())
      return sendJson(res, 200, { text })
    }
    if (req.method === 'POST' && path === '/v1/audio/speech') {
      const t0 = performance.now()
      const body = await readJson(req, res)
      if (body === undefined) return
      const { input, speed } = body ?? {}
      const format = body?.response_format ?? 'mp3'
      if (typeof input !== 'string' || !input.trim() || typeof body.model !== 'string')
        return sendJson(res, 400, {
          error: { message: "'input' and 'model' are required", type: 'invalid_request_error' },
        })
      if (format !== 'wav' && format !== 'pcm')
        return sendJson(res, 400, {
          error: { message: `this fake speaks wav and pcm, not ${format}`, type: 'invalid_request_error' },
        })
      stats.syntheses++
      stats.formats[format] = (stats.formats[format] ?? 0) + 1
      const words = input.trim().split(/\s+/).length
      const rate = typeof speed === 'number' && speed > 0 ? speed : 1
      const total = Math.round(((words / WORDS_PER_MINUTE) * 60 * TTS_RATE) / rate)
      let closed = false
      res.on('close', () => {
        closed = true
      })
      const first = t0 + model.ttsFirstMs
      await sleep(first - performance.now())
      if (closed) return
      res.writeHead(200, { 'content-type': format === 'wav' ? 'audio/wav' : 'audio/pcm' })
      if (format === 'wav') res.write(wavHeader(total * 2))
      else res.flushHeaders()
      let sent = 0
      await paced(first, CHUNK_MS, () => {
        if (closed) return false
        const due = Math.min(total, Math.floor(((performance.now() - first) / 1000) * model.ttsSpeed * TTS_RATE))
        if (due > sent) {
          res.write(toneBytes(sent, due))
          sent = due
        }
        return sent < total
      })
      if (!closed) res.end()
      return
    }
    return sendJson(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error' } })
  })
  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    stats,
    /** What the caller is saying now: the next transcriptions answer it. */
    heard: (text) => {
      heard = text
    },
    close: server.close,
  }
}

// ---- Twilio REST ------------------------------------------------------------------------------------------

/**
 * Twilio's REST Calls API, as far as a call the caller placed needs it: POST …/Calls/{sid}.json (hang up,
 * transfer) answers 200 with the call; requests are counted by the form's Status / Twiml. GET
 * …/IncomingPhoneNumbers.json?PhoneNumber= owns every number (POST /phone-numbers routes only owned ones).
 */
export async function startFakeTwilioRest() {
  const accountSid = 'AC' + randomBytes(16).toString('hex')
  const authToken = randomBytes(16).toString('hex')
  const requests = []
  const server = await serve(async (req, res) => {
    const form = Object.fromEntries(new URLSearchParams((await readBody(req)).toString('utf8')))
    const m = /^\/2010-04-01\/Accounts\/(AC[0-9a-f]+)\/Calls(?:\/(CA[0-9a-zA-Z]+))?\.json$/.exec(req.url)
    requests.push({ method: req.method, path: req.url, form })
    // The bench's account owns every number it routes: IncomingPhoneNumbers lists the one asked for.
    const owned = /^\/2010-04-01\/Accounts\/(AC[0-9a-f]+)\/IncomingPhoneNumbers\.json\?(.*)$/.exec(req.url)
    if (req.method === 'GET' && owned && owned[1] === accountSid) {
      const phone = new URLSearchParams(owned[2]).get('PhoneNumber')
      return sendJson(res, 200, { incoming_phone_numbers: phone ? [{ phone_number: phone }] : [], next_page_uri: null })
    }
    if (req.method !== 'POST' || !m || m[1] !== accountSid)
      return sendJson(res, 404, {
        code: 20404,
        message: `The requested resource ${req.url} was not found`,
        status: 404,
      })
    const sid = m[2] ?? 'CA' + randomBytes(16).toString('hex')
    const now = new Date().toUTCString()
    sendJson(res, m[2] ? 200 : 201, {
      sid,
      account_sid: accountSid,
      to: form.To ?? null,
      from: form.From ?? null,
      status: form.Status ?? (m[2] ? 'in-progress' : 'queued'),
      date_created: now,
      date_updated: now,
      uri: `/2010-04-01/Accounts/${accountSid}/Calls/${sid}.json`,
    })
  })
  return { url: `http://127.0.0.1:${server.port}`, accountSid, authToken, requests, close: server.close }
}
