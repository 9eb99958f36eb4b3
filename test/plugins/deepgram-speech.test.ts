// The deepgram speech provider against a local fake written from Deepgram's documented protocol
// (test/helpers/fake-deepgram.ts): real WAV uploads, a streamed /v1/speak body and the live /v1/listen WebSocket,
// with text carried as tone audio. No network.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { LiveTranscription, ListenOptions, TranscriptEvent } from '~/kit/speech'
import { concatPcm, decodeToneText, encodeToneText } from '~/lib/audio'
import deepgram from '../../providers/speech/deepgram'
import { testSpeechProvider } from '../contract/speech.contract'
import { startFakeDeepgram, type FakeDeepgram } from '../helpers/fake-deepgram'
import { sleep, until } from '../helpers/wait'

const KEY = 'dg-secret-0123456789abcdef'
const SETTINGS = [
  'DEEPGRAM_BASE_URL',
  'DEEPGRAM_API_KEY',
  'DEEPGRAM_STT_MODEL',
  'DEEPGRAM_TTS_MODEL',
  'DEEPGRAM_FINALIZE_TIMEOUT_MS',
  'DEEPGRAM_KEEPALIVE_MS',
  'SPEECH_TIMEOUT_MS',
]
const saved = { ...process.env }
let fake: FakeDeepgram
const opened: LiveTranscription[] = []

const reset = () => {
  for (const k of SETTINGS) delete process.env[k]
  process.env.DEEPGRAM_BASE_URL = fake.url
  process.env.DEEPGRAM_API_KEY = KEY
}

beforeAll(async () => {
  fake = await startFakeDeepgram({ key: KEY })
  // Set after import on purpose: the provider must read its settings at call time.
  reset()
})
afterAll(async () => {
  process.env = saved
  await fake?.close()
})
beforeEach(() => {
  reset()
  fake.requests.length = 0
  fake.sockets.length = 0
  fake.speak = { firstByteDelayMs: 0, chunkBytes: 4800, chunkIntervalMs: 0 }
})
afterEach(() => {
  for (const live of opened.splice(0)) live.close()
})

const opts = { voice: null, speakingRate: 1, sampleRate: 8000 }
const PHRASE = 'Book a table for two at seven'

/** Opens a live session that records its events. */
function listen(o: Partial<ListenOptions> = {}) {
  const events: TranscriptEvent[] = []
  const live = deepgram.listen!({
    sampleRate: 16000,
    language: 'en-US',
    endOfSpeechMs: 300,
    onEvent: (e) => events.push(e),
    ...o,
  })
  opened.push(live)
  return { live, events }
}

/** Sends audio the way a call leg does: 20 ms frames. Answers the number of bytes sent. */
function feed(live: LiveTranscription, samples: Int16Array, sampleRate: number) {
  const frame = sampleRate / 50
  for (let o = 0; o < samples.length; o += frame) live.send(samples.subarray(o, o + frame))
  return samples.length * 2
}
const silence = (ms: number, sampleRate: number) => new Int16Array(Math.round((ms / 1000) * sampleRate))

const finals = (events: TranscriptEvent[]) => events.filter((e) => e.type === 'final')
const errors = (events: TranscriptEvent[]) => events.filter((e) => e.type === 'error')

async function collect(stream: AsyncIterable<Int16Array>) {
  const chunks: Int16Array[] = []
  for await (const c of stream) chunks.push(c)
  return chunks
}
const concat = concatPcm

describe('deepgram speech provider: pre-recorded and synthesis', () => {
  it('transcribes through POST /v1/listen with a WAV body and the Token key', async () => {
    process.env.DEEPGRAM_STT_MODEL = 'nova-3-phonecall'
    const samples = encodeToneText('Book me for Tuesday', 16000)
    const t = await deepgram.transcribe({ samples, sampleRate: 16000 }, { language: 'en-GB' })
    expect(t).toEqual({ text: 'Book me for Tuesday', confidence: 0.99 })
    expect(fake.requests).toHaveLength(1)
    const [r] = fake.requests
    expect(r).toMatchObject({ method: 'POST', path: '/v1/listen', authorization: `Token ${KEY}` })
    expect(r.contentType).toBe('audio/wav')
    expect(r.bytes).toBe(44 + samples.length * 2)
    expect(r.query).toEqual({ model: 'nova-3-phonecall', smart_format: 'true', language: 'en-GB' })
  })

  it('synthesizes through POST /v1/speak as raw linear16 at the leg rate, asked of Deepgram directly', async () => {
    for (const sampleRate of [8000, 16000]) {
      fake.requests.length = 0
      const pcm = await deepgram.synthesize('Hello there.', { ...opts, sampleRate })
      expect(pcm.sampleRate).toBe(sampleRate)
      expect(decodeToneText(pcm.samples, sampleRate)).toBe('Hello there.')
      const [r] = fake.requests
      expect(r).toMatchObject({ method: 'POST', path: '/v1/speak', authorization: `Token ${KEY}` })
      expect(r.contentType).toMatch(/^application\/json/)
      expect(r.json).toEqual({ text: 'Hello there.' })
      expect(r.query).toEqual({
        model: 'aura-2-thalia-en',
        encoding: 'linear16',
        sample_rate: String(sampleRate),
        container: 'none',
      })
    }
  })

  it('asks for the next rate Deepgram makes and resamples to an odd one', async () => {
    const pcm = await deepgram.synthesize('Odd rates work.', { ...opts, sampleRate: 22050 })
    expect(pcm.sampleRate).toBe(22050)
    expect(decodeToneText(pcm.samples, 22050)).toBe('Odd rates work.')
    expect(fake.requests[0].query.sample_rate).toBe('24000')
    // The stream of an odd rate is the same audio, in one piece.
    const chunks = await collect(deepgram.synthesizeStream!('Odd rates work.', { ...opts, sampleRate: 22050 }))
    expect(concat(chunks)).toEqual(pcm.samples)
  })

  it('maps the speaking rate to speed (0.7–1.5, left out at 1) and an aura voice to the model', async () => {
    await deepgram.synthesize('Hi.', { ...opts, speakingRate: 1.25, voice: 'aura-2-zeus-en' })
    await deepgram.synthesize('Hi.', { ...opts, speakingRate: 3, voice: 'neural-en-us-aria' })
    await deepgram.synthesize('Hi.', { ...opts, speakingRate: 0.5 })
    await deepgram.synthesize('Hi.', opts)
    expect(fake.requests.map((r) => [r.query.model, r.query.speed])).toEqual([
      ['aura-2-zeus-en', '1.25'],
      ['aura-2-thalia-en', '1.5'],
      ['aura-2-thalia-en', '0.7'],
      ['aura-2-thalia-en', undefined],
    ])
  })

  it('makes no request for empty audio or empty text', async () => {
    expect(await deepgram.transcribe({ samples: new Int16Array(0), sampleRate: 8000 })).toEqual({
      text: '',
      confidence: null,
    })
    expect((await deepgram.synthesize(' \n ', opts)).samples.length).toBe(0)
    expect(await collect(deepgram.synthesizeStream!('  ', opts))).toEqual([])
    expect(fake.requests).toHaveLength(0)
  })

  it("refuses text over Deepgram's 2,000 characters before any request", async () => {
    await expect(deepgram.synthesize('a'.repeat(2001), opts)).rejects.toThrow(/2001 characters is over the 2000 limit/)
    await expect(collect(deepgram.synthesizeStream!('a'.repeat(2001), opts))).rejects.toThrow(/over the 2000 limit/)
    expect(fake.requests).toHaveLength(0)
  })

  it('synthesizeStream yields the body as it arrives: several chunks, odd byte splits, the same samples', async () => {
    // 1,001-byte chunks split a sample at every other seam.
    fake.speak = { firstByteDelayMs: 0, chunkBytes: 1001, chunkIntervalMs: 2 }
    const text = 'Streaming works, one chunk after another.'
    const whole = await deepgram.synthesize(text, { ...opts, sampleRate: 16000 })
    const chunks = await collect(deepgram.synthesizeStream!(text, { ...opts, sampleRate: 16000 }))
    expect(chunks.length).toBeGreaterThan(1)
    for (const c of chunks) expect(c).toBeInstanceOf(Int16Array)
    const joined = concat(chunks)
    expect(joined).toEqual(whole.samples)
    expect(decodeToneText(joined, 16000)).toBe(text)
  })

  it('synthesizeStream stops when the caller aborts mid-stream and throws the reason', async () => {
    fake.speak = { firstByteDelayMs: 0, chunkBytes: 1600, chunkIntervalMs: 25 }
    const controller = new AbortController()
    const got: Int16Array[] = []
    const started = Date.now()
    const run = (async () => {
      for await (const c of deepgram.synthesizeStream!(PHRASE, { ...opts, signal: controller.signal })) {
        got.push(c)
        if (got.length === 2) controller.abort(new Error('caller hung up'))
      }
    })()
    await expect(run).rejects.toThrow('caller hung up')
    expect(got).toHaveLength(2)
    // The whole phrase would take about 70 chunks, 1.7 s at this pace.
    expect(Date.now() - started).toBeLessThan(1000)
  })

  it('an abort before the first byte rejects at once with the reason', async () => {
    fake.speak = { firstByteDelayMs: 3000, chunkBytes: 4800, chunkIntervalMs: 0 }
    const controller = new AbortController()
    setTimeout(() => controller.abort(new Error('barge-in')), 100)
    const started = Date.now()
    await expect(collect(deepgram.synthesizeStream!(PHRASE, { ...opts, signal: controller.signal }))).rejects.toThrow(
      'barge-in',
    )
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it('bounds a slow server by SPEECH_TIMEOUT_MS, body included', async () => {
    process.env.SPEECH_TIMEOUT_MS = '300'
    fake.speak = { firstByteDelayMs: 0, chunkBytes: 800, chunkIntervalMs: 100 }
    const started = Date.now()
    await expect(collect(deepgram.synthesizeStream!(PHRASE, opts))).rejects.toThrow(
      /POST http:\/\/127\.0\.0\.1:\d+\/v1\/speak failed \(no complete answer within 300 ms\)/,
    )
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it('a 401 names the status and the endpoint and never the key', async () => {
    const wrong = `${KEY}-revoked`
    process.env.DEEPGRAM_API_KEY = wrong
    const e = (await deepgram.synthesize('Hello.', opts).catch((x: Error) => x)) as Error
    expect(e).toBeInstanceOf(Error)
    expect(e.message).toMatch(
      /^\[speech\] \[deepgram\] POST http:\/\/127\.0\.0\.1:\d+\/v1\/speak failed \(HTTP 401: INVALID_AUTH: Invalid credentials\.\)$/,
    )
    expect(e.message).not.toContain(wrong)
    await expect(deepgram.transcribe({ samples: encodeToneText('x', 8000), sampleRate: 8000 })).rejects.toThrow(
      /\/v1\/listen failed \(HTTP 401: INVALID_AUTH: Invalid credentials\.\)/,
    )
    // No retry: one request each.
    expect(fake.requests).toHaveLength(2)
  })

  it("redacts the key from a server's message", async () => {
    fake.failNext(500, { err_code: 'INTERNAL', err_msg: `upstream broke for ${KEY}` })
    const e = (await deepgram.synthesize('Hello.', opts).catch((x: Error) => x)) as Error
    expect(e.message).toContain('HTTP 500: INTERNAL: upstream broke for [redacted]')
    expect(e.message).not.toContain(KEY)
  })
})

describe('deepgram speech provider: live transcription', () => {
  for (const sampleRate of [8000, 16000])
    it(`streams interim results, a final with endOfUtterance and an utterance end at ${sampleRate} Hz`, async () => {
      const { live, events } = listen({ sampleRate, endOfSpeechMs: 300 })
      // Sent at once, before the socket is open: the provider holds it until then.
      let bytes = feed(live, silence(200, sampleRate), sampleRate)
      bytes += feed(live, encodeToneText(PHRASE, sampleRate), sampleRate)
      bytes += feed(live, silence(1500, sampleRate), sampleRate)
      await until('utterance end', async () => events.some((e) => e.type === 'utterance_end'), 5000, 20)

      const interims = events.filter((e) => e.type === 'interim').map((e) => e.text)
      for (const text of interims) expect(PHRASE.startsWith(text), text).toBe(true)
      expect(interims.some((t) => t.length < PHRASE.length)).toBe(true)
      expect(finals(events)).toEqual([{ type: 'final', text: PHRASE, confidence: 0.99, endOfUtterance: true }])
      const order = events.map((e) => e.type)
      expect(order.lastIndexOf('interim')).toBeLessThan(order.indexOf('final'))
      expect(order.indexOf('final')).toBeLessThan(order.indexOf('utterance_end'))
      expect(errors(events)).toEqual([])

      const [socket] = fake.sockets
      expect(socket.authorization).toBe(`Token ${KEY}`)
      expect(socket.query).toMatchObject({
        model: 'nova-3',
        encoding: 'linear16',
        sample_rate: String(sampleRate),
        channels: '1',
        interim_results: 'true',
        endpointing: '300',
        utterance_end_ms: '1000',
        vad_events: 'true',
        language: 'en-US',
      })
      expect(socket.audioBytes).toBe(bytes)
    })

  it('asks for an utterance end no sooner than endpointing (and never under 1000 ms)', async () => {
    listen({ endOfSpeechMs: 1400 }).live.send(silence(20, 16000))
    await until('socket', async () => fake.sockets[0], 5000, 20)
    expect(fake.sockets[0].query).toMatchObject({ endpointing: '1400', utterance_end_ms: '1400' })
  })

  it('finalize() before the endpoint: the final with the whole phrase arrives before it resolves', async () => {
    const { live, events } = listen({ sampleRate: 16000, endOfSpeechMs: 600 })
    feed(live, encodeToneText(PHRASE, 16000), 16000)
    feed(live, silence(100, 16000), 16000)
    const started = Date.now()
    await live.finalize()
    expect(finals(events)).toEqual([{ type: 'final', text: PHRASE, confidence: 0.99, endOfUtterance: false }])
    // Resolved by the from_finalize answer, not by the 1 s bound.
    expect(Date.now() - started).toBeLessThan(900)
    expect(fake.sockets[0].controls).toEqual(['Finalize'])
    expect(errors(events)).toEqual([])
  })

  it('finalize() with nothing pending resolves (within its bound) and never rejects', async () => {
    process.env.DEEPGRAM_FINALIZE_TIMEOUT_MS = '300'
    const { live, events } = listen()
    feed(live, silence(100, 16000), 16000)
    await live.finalize()
    expect(finals(events)).toEqual([])
    live.close()
    // After close: at once.
    await live.finalize()
  })

  it('keeps the socket alive with KeepAlive while no audio flows', async () => {
    process.env.DEEPGRAM_KEEPALIVE_MS = '100'
    const { live, events } = listen()
    live.send(silence(20, 16000))
    await until(
      'keepalives',
      async () => fake.sockets[0]?.controls.filter((c) => c === 'KeepAlive').length >= 3,
      5000,
      20,
    )
    expect(errors(events)).toEqual([])
  })

  it('close() sends CloseStream and no event follows it', async () => {
    const { live, events } = listen()
    feed(live, encodeToneText(PHRASE, 16000), 16000)
    await until('interim', async () => events.some((e) => e.type === 'interim'), 5000, 20)
    const before = events.length
    live.close()
    live.send(silence(100, 16000))
    await until('the fake saw the close', async () => fake.sockets[0].closed, 5000, 20)
    await sleep(50)
    const [socket] = fake.sockets
    expect(socket.controls).toEqual(['CloseStream'])
    // The fake flushed the pending words and its Metadata; the host hears neither.
    expect(socket.sent.map((m) => m.type).slice(-2)).toEqual(['Results', 'Metadata'])
    expect(events).toHaveLength(before)
  })

  it('a socket closed by the server is one error event', async () => {
    const { live, events } = listen()
    live.send(silence(20, 16000))
    const socket = await until('socket', async () => fake.sockets[0], 5000, 20)
    socket.drop(1011, 'NET-0000: the fake dropped the socket')
    await until('error', async () => errors(events).length > 0, 5000, 20)
    await sleep(100)
    expect(errors(events)).toHaveLength(1)
    expect(errors(events)[0].message).toMatch(/\/v1\/listen closed unexpectedly \(code 1011: NET-0000/)
    // Further audio is dropped quietly and finalize still resolves.
    live.send(silence(20, 16000))
    await live.finalize()
    expect(events).toHaveLength(1)
  })

  it('a wrong key is one error event naming HTTP 401 and Deepgram reason, never the key', async () => {
    const wrong = `${KEY}-revoked`
    process.env.DEEPGRAM_API_KEY = wrong
    const { live, events } = listen()
    live.send(silence(20, 16000))
    await until('error', async () => errors(events).length > 0, 5000, 20)
    await sleep(100)
    expect(events).toHaveLength(1)
    const [e] = errors(events)
    expect(e.message).toMatch(
      /^\[speech\] \[deepgram\] ws:\/\/127\.0\.0\.1:\d+\/v1\/listen refused the connection \(HTTP 401: Invalid credentials\.\)$/,
    )
    expect(e.message).not.toContain(wrong)
    expect(fake.requests.filter((r) => r.upgrade)).toHaveLength(1)
    expect(fake.sockets).toHaveLength(0)
  })

  it('a refused connection is one error event', async () => {
    process.env.DEEPGRAM_BASE_URL = 'http://127.0.0.1:9'
    const { live, events } = listen()
    live.send(silence(20, 16000))
    await until('error', async () => errors(events).length > 0, 5000, 20)
    await sleep(100)
    expect(events).toHaveLength(1)
    expect(errors(events)[0].message).toMatch(/ws:\/\/127\.0\.0\.1:9\/v1\/listen failed \(.*ECONNREFUSED/)
  })
})

// With the fake behind it, the deepgram provider meets the offline behaviour contract too.
describe('deepgram speech provider: the full contract against the fake server', () => {
  testSpeechProvider(deepgram, { offline: true })
})
