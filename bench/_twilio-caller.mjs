// One phone caller on Twilio's side of a call, paced on the wall clock as a real line is: it rings the number
// (the signed voice webhook), reads the TwiML's <Connect><Stream>, opens the Media Stream and speaks its
// protocol (connected, start with the custom parameters, media, mark, stop). From the start it sends a 20 ms
// frame of 8 kHz μ-law every 20 ms, silence when not talking, scheduled by absolute time. Unlike a phone it
// plays the agent's audio instantly: each mark is echoed as soon as it arrives, so a 16-turn call lasts its
// questions and waits, not 16 answers of ~14 s more. It never talks while the agent's last audio is unmarked (no barge-in), and measures, per
// question, the wall time from its last voiced frame to the first agent media message after it.
import WebSocket from 'ws'
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks.js'

const RATE = 8000
const FRAME = 160
const FRAME_MS = 20
const POLL_MS = 5

// ---- G.711 μ-law ------------------------------------------------------------------------------------------

const BIAS = 0x84
const CLIP = 32635

export function linearToMulaw(sample) {
  const sign = sample < 0 ? 0x80 : 0
  const s = Math.min(sign ? -sample : sample, CLIP) + BIAS
  let exponent = 7
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--
  const mantissa = (s >> (exponent + 3)) & 0x0f
  return ~(sign | (exponent << 4) | mantissa) & 0xff
}

export function mulawToLinear(byte) {
  const u = ~byte & 0xff
  const magnitude = ((((u & 0x0f) << 3) + BIAS) << ((u >> 4) & 0x07)) - BIAS
  return u & 0x80 ? -magnitude : magnitude
}

/** Frames are sent as base64 μ-law: the two kinds the caller says are encoded once. */
const frameOf = (sample) => {
  const bytes = Buffer.alloc(FRAME)
  for (let i = 0; i < FRAME; i++) bytes[i] = linearToMulaw(sample(i))
  return bytes.toString('base64')
}
const SILENCE = frameOf(() => 0)
// 300 Hz + 700 Hz are whole cycles in 20 ms, so one frame repeats seamlessly. RMS ≈ 4,000: ten times the
// server's speech threshold (400), and μ-law keeps it so.
const VOICED = frameOf(
  (i) => 4000 * Math.sin((2 * Math.PI * 300 * i) / RATE) + 4000 * Math.sin((2 * Math.PI * 700 * i) / RATE),
)

export const frameRms = (base64) => {
  const bytes = Buffer.from(base64, 'base64')
  let sum = 0
  for (const b of bytes) sum += mulawToLinear(b) ** 2
  return Math.sqrt(sum / bytes.length)
}

// ---- the call ---------------------------------------------------------------------------------------------

const unescapeXml = (s) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&')

/** The stream URL and its parameters from our TwiML answer; throws with the answer when it has none. */
export function parseStreamTwiml(xml) {
  const stream = /<Connect>\s*<Stream\s+url="([^"]*)"/.exec(xml)
  if (!stream) throw new Error(`the voice webhook did not connect a stream: ${xml.slice(0, 300)}`)
  const parameters = {}
  for (const m of xml.matchAll(/<Parameter\s+name="([^"]*)"\s+value="([^"]*)"\s*\/>/g))
    parameters[unescapeXml(m[1])] = unescapeXml(m[2])
  return { url: unescapeXml(stream[1]), parameters }
}

/** Twilio rings `to`: the form it posts to the number's voice URL, signed over that exact URL. */
async function ring({ origin, accountSid, authToken, callSid, from, to }) {
  const url = `${origin}/telephony/twilio/voice`
  const params = {
    AccountSid: accountSid,
    ApiVersion: '2010-04-01',
    CallSid: callSid,
    CallStatus: 'ringing',
    Called: to,
    Caller: from,
    Direction: 'inbound',
    From: from,
    To: to,
  }
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
      'user-agent': 'TwilioProxy/1.1',
      'x-twilio-signature': getExpectedTwilioSignature(authToken, url, params),
    },
    body: new URLSearchParams(params).toString(),
    signal: AbortSignal.timeout(15_000),
  })
  const body = await res.text()
  if (res.status !== 200) throw new Error(`voice webhook: HTTP ${res.status} ${body.slice(0, 300)}`)
  return parseStreamTwiml(body)
}

/**
 * Places one call and asks `questions` in turn. `onSay(text)` is told what the caller is about to say (the
 * fake transcription answers it). Answers the call's figures; throws with what it was waiting for when the
 * server does not answer in time.
 */
export async function placeCall({
  origin,
  accountSid,
  authToken,
  callSid,
  from,
  to,
  questions,
  onSay = () => {},
  speechMs = 2000,
  pauseMs = 300,
  greetingTimeoutMs = 30_000,
  answerTimeoutMs = 30_000,
}) {
  const { url, parameters } = await ring({ origin, accountSid, authToken, callSid, from, to })
  const streamSid = 'MZ' + callSid.slice(2)
  const ws = new WebSocket(url)
  await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`media stream ${url}: no upgrade in 10 s`)), 10_000)
    ws.once('open', () => {
      clearTimeout(timer)
      ok()
    })
    ws.once('error', (e) => {
      clearTimeout(timer)
      fail(e)
    })
    ws.once('unexpected-response', (_req, res) => {
      clearTimeout(timer)
      fail(new Error(`media stream ${url}: upgrade refused, HTTP ${res.statusCode}`))
    })
  })

  const stats = {
    media: 0,
    marks: 0,
    clears: 0,
    other: 0,
    talkedOver: 0,
    silentFirstFrames: 0,
    lateFrames: 0,
    maxLateMs: 0,
  }
  let closed = false
  let closeCode = null
  let socketError = null
  let unmarked = 0
  let lastFromServer = 0
  let talking = 0
  let awaitingFirstAudio = false
  let firstAudio = null
  let seq = 0
  const send = (message) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ ...message, sequenceNumber: String(++seq) }))
  }

  // Without a listener a late socket error would throw out of the bench; the close that follows reports it.
  ws.on('error', (e) => {
    socketError = e
  })
  ws.on('close', (code) => {
    closed = true
    closeCode = code
  })
  ws.on('message', (data) => {
    const now = performance.now()
    lastFromServer = now
    const text = String(data)
    // An answer arrives as hundreds of media messages at once; only the first of each needs parsing.
    if (text.startsWith('{"event":"media"') && !awaitingFirstAudio) {
      stats.media++
      unmarked++
      if (talking > 0) stats.talkedOver++
      return
    }
    let m
    try {
      m = JSON.parse(text)
    } catch {
      stats.other++
      return
    }
    if (m.event === 'media') {
      stats.media++
      unmarked++
      if (talking > 0) stats.talkedOver++
      if (awaitingFirstAudio) {
        awaitingFirstAudio = false
        firstAudio = now
        // A leading frame of silence would count as the answer here while the caller hears nothing yet.
        if (typeof m.media?.payload !== 'string' || frameRms(m.media.payload) < 100) stats.silentFirstFrames++
      }
    } else if (m.event === 'mark' && typeof m.mark?.name === 'string') {
      // Played at once: Twilio echoes a mark when the audio before it has played.
      stats.marks++
      unmarked = 0
      send({ event: 'mark', streamSid, mark: { name: m.mark.name } })
    } else if (m.event === 'clear') {
      stats.clears++
      unmarked = 0
    } else stats.other++
  })

  send({ event: 'connected', protocol: 'Call', version: '1.0.0' })
  send({
    event: 'start',
    streamSid,
    start: {
      streamSid,
      accountSid,
      callSid,
      tracks: ['inbound'],
      customParameters: parameters,
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: RATE, channels: 1 },
    },
  })

  // The line: a frame every 20 ms from here on, by absolute time; frames a stalled event loop missed are sent
  // on the next tick, so the server's clock (caller samples) keeps pace with the wall clock.
  const lineStart = performance.now()
  let chunk = 0
  let lastVoicedAt = 0
  let lineTimer = null
  const tick = () => {
    const now = performance.now()
    const late = now - (lineStart + chunk * FRAME_MS)
    if (late > FRAME_MS) {
      stats.lateFrames++
      stats.maxLateMs = Math.max(stats.maxLateMs, Math.round(late))
    }
    while (lineStart + chunk * FRAME_MS <= now && !closed) {
      const voiced = talking > 0
      // Built as a string: 50 frames a second per call, and JSON.stringify of each shows at 50 calls.
      if (ws.readyState === WebSocket.OPEN)
        ws.send(
          `{"event":"media","sequenceNumber":"${++seq}","streamSid":"${streamSid}","media":{"track":"inbound","chunk":"${chunk + 1}","timestamp":"${chunk * FRAME_MS}","payload":"${voiced ? VOICED : SILENCE}"}}`,
        )
      chunk++
      if (voiced && --talking === 0) {
        lastVoicedAt = performance.now()
        firstAudio = null
        awaitingFirstAudio = true
      }
    }
    if (!closed) lineTimer = setTimeout(tick, lineStart + chunk * FRAME_MS - performance.now())
  }
  tick()

  const waitUntil = async (test, timeoutMs, what) => {
    const deadline = performance.now() + timeoutMs
    while (!test()) {
      if (closed)
        throw new Error(
          `call ${callSid}: the stream closed (code ${closeCode}${socketError ? `, ${socketError.message}` : ''}) while waiting for ${what}`,
        )
      if (performance.now() > deadline) throw new Error(`call ${callSid}: no ${what} within ${timeoutMs} ms`)
      await new Promise((r) => setTimeout(r, POLL_MS))
    }
  }
  // The agent is done talking once all its audio is marked and it has been quiet for the pause.
  const agentDone = () => stats.media > 0 && unmarked === 0 && performance.now() - lastFromServer >= pauseMs

  const turns = []
  try {
    await waitUntil(agentDone, greetingTimeoutMs, 'greeting and its mark')
    for (const question of questions) {
      onSay(question)
      const frames = Math.round(speechMs / FRAME_MS)
      talking = frames
      await waitUntil(() => talking === 0, speechMs + 5_000, 'own speech to be sent')
      const endOfSpeech = lastVoicedAt
      await waitUntil(() => firstAudio !== null, answerTimeoutMs, `first audio of the answer to "${question}"`)
      turns.push({ question, endOfSpeech, firstAudio, latencyMs: firstAudio - endOfSpeech })
      await waitUntil(agentDone, answerTimeoutMs, `the mark after the answer to "${question}"`)
    }
  } finally {
    awaitingFirstAudio = false
    if (!closed) send({ event: 'stop', streamSid, stop: { accountSid, callSid } })
    closed = true
    clearTimeout(lineTimer)
    if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) {
      const gone = new Promise((r) => ws.once('close', r))
      ws.close(1000)
      await Promise.race([gone, new Promise((r) => setTimeout(r, 5_000))])
    }
  }
  return { conversationId: parameters.conversation_id ?? null, callSid, turns, stats }
}
