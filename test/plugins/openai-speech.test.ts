// The openai speech provider against a local fake server speaking the OpenAI audio protocol with tone text
// (test/helpers/fake-speech.ts): real multipart, WAV and streamed raw PCM on the wire, no network.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { SynthesisOptions } from '~/kit/speech'
import { decodeToneText, encodeToneText } from '~/lib/audio'
import openai from '../../providers/speech/openai'
import { testSpeechProvider } from '../contract/speech.contract'
import { startFakeSpeech, type FakeSpeech } from '../helpers/fake-speech'

const KEY = 'sk-speech-test-123'
let fake: FakeSpeech
const saved = { ...process.env }

beforeAll(async () => {
  fake = await startFakeSpeech()
  // Set after import on purpose: the provider must read its settings at call time.
  process.env.SPEECH_BASE_URL = `${fake.url}/`
  process.env.SPEECH_API_KEY = KEY
  process.env.SPEECH_STT_MODEL = 'fake-stt'
  process.env.SPEECH_TTS_MODEL = 'fake-tts'
  delete process.env.SPEECH_TIMEOUT_MS
})
afterAll(async () => {
  process.env = saved
  await fake?.close()
})
beforeEach(() => {
  fake.requests.length = 0
  fake.delayMs = 0
  fake.pcm = { chunkBytes: 4801, firstByteDelayMs: 0, speed: 0 }
  delete process.env.SPEECH_TIMEOUT_MS
})

const opts = { voice: null, speakingRate: 1, sampleRate: 8000 }

describe('openai speech provider', () => {
  it('synthesizes through /audio/speech with the bearer key and resamples the 24 kHz WAV', async () => {
    const pcm = await openai.synthesize('Hello there.', { ...opts, voice: 'nova', speakingRate: 1.25 })
    expect(pcm.sampleRate).toBe(8000)
    expect(decodeToneText(pcm.samples, 8000)).toBe('Hello there.')
    expect(fake.requests).toHaveLength(1)
    const [r] = fake.requests
    expect(r).toMatchObject({ method: 'POST', path: '/v1/audio/speech', authorization: `Bearer ${KEY}` })
    expect(r.contentType).toMatch(/^application\/json/)
    expect(r.fields).toEqual({
      model: 'fake-tts',
      input: 'Hello there.',
      voice: 'nova',
      speed: 1.25,
      response_format: 'wav',
    })
  })

  it("uses the 'alloy' voice by default and clamps the speaking rate to 0.5–2", async () => {
    await openai.synthesize('Hi.', { ...opts, speakingRate: 9 })
    expect(fake.requests[0].fields).toMatchObject({ voice: 'alloy', speed: 2 })
  })

  it('transcribes through /audio/transcriptions as a multipart WAV upload', async () => {
    const samples = encodeToneText('Book me for Tuesday', 16000)
    const t = await openai.transcribe({ samples, sampleRate: 16000 }, { language: 'en-GB' })
    expect(t).toEqual({ text: 'Book me for Tuesday', confidence: null })
    const [r] = fake.requests
    expect(r).toMatchObject({ method: 'POST', path: '/v1/audio/transcriptions', authorization: `Bearer ${KEY}` })
    expect(r.contentType).toMatch(/^multipart\/form-data; boundary=/)
    expect(r.fields).toEqual({ model: 'fake-stt', response_format: 'json', language: 'en' })
    expect(r.file).toEqual({ name: 'utterance.wav', type: 'audio/wav', bytes: 44 + samples.length * 2 })
  })

  it('leaves language out when none is given and sends no Authorization without a key', async () => {
    delete process.env.SPEECH_API_KEY
    try {
      await openai.transcribe({ samples: encodeToneText('ok', 8000), sampleRate: 8000 })
    } finally {
      process.env.SPEECH_API_KEY = KEY
    }
    expect(fake.requests[0].authorization).toBeUndefined()
    expect(fake.requests[0].fields).toEqual({ model: 'fake-stt', response_format: 'json' })
  })

  it('makes no request for empty audio or empty text', async () => {
    expect(await openai.transcribe({ samples: new Int16Array(0), sampleRate: 8000 })).toEqual({
      text: '',
      confidence: null,
    })
    expect((await openai.synthesize('  ', opts)).samples.length).toBe(0)
    expect(fake.requests).toHaveLength(0)
  })

  it('turns an HTTP error into a thrown Error naming the status and the server message, never the key', async () => {
    fake.failNext(500, { error: { message: `upstream broke for key ${KEY}` } })
    const e = await openai.synthesize('Hello.', opts).catch((x: Error) => x)
    expect(e).toBeInstanceOf(Error)
    expect((e as Error).message).toContain('HTTP 500')
    expect((e as Error).message).toContain('/v1/audio/speech')
    expect((e as Error).message).toContain('upstream broke')
    expect((e as Error).message).not.toContain(KEY)
    fake.failNext(401, { error: { message: 'Incorrect API key provided' } })
    await expect(openai.transcribe({ samples: encodeToneText('x', 8000), sampleRate: 8000 })).rejects.toThrow(
      /failed \(HTTP 401: Incorrect API key provided\)/,
    )
    // No retry: one request each.
    expect(fake.requests).toHaveLength(2)
  })

  it('refuses text over 4,096 characters before any request', async () => {
    await expect(openai.synthesize('a'.repeat(4097), opts)).rejects.toThrow(/over the 4096 limit/)
    expect(fake.requests).toHaveLength(0)
  })

  it('refuses an answer over 20 MB', async () => {
    fake.failNext(200, 'x'.repeat(20 * 1024 * 1024 + 1))
    await expect(openai.synthesize('Hi.', opts)).rejects.toThrow(/over the 20971520 limit/)
  })

  it('refuses an answer that is not a WAV with a clear error', async () => {
    fake.failNext(200, { not: 'audio' })
    await expect(openai.synthesize('Hi.', opts)).rejects.toThrow(/not a usable WAV: WAV: not a RIFF\/WAVE file/)
  })

  it('bounds a slow server by SPEECH_TIMEOUT_MS', async () => {
    process.env.SPEECH_TIMEOUT_MS = '300'
    fake.delayMs = 3000
    const started = Date.now()
    await expect(openai.synthesize('Hello.', opts)).rejects.toThrow(/failed \(no response within 300 ms\)/)
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it("passes the caller's abort through as is", async () => {
    fake.delayMs = 3000
    const controller = new AbortController()
    setTimeout(() => controller.abort(new Error('caller hung up')), 100)
    await expect(openai.synthesize('Hello.', { ...opts, signal: controller.signal })).rejects.toThrow('caller hung up')
  })

  it('names a server that is not there', async () => {
    process.env.SPEECH_BASE_URL = 'http://127.0.0.1:9/v1'
    try {
      await expect(openai.synthesize('Hello.', opts)).rejects.toThrow(
        /\[speech\] \[openai\] POST http:\/\/127\.0\.0\.1:9\/v1\/audio\/speech failed \(no response: /,
      )
    } finally {
      process.env.SPEECH_BASE_URL = `${fake.url}/`
    }
  })
})

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms))
/** Every chunk with the time it arrived, the joined samples, and the error if the stream failed. */
async function collect(text: string, o: Partial<SynthesisOptions> = {}, each?: (c: Int16Array) => unknown) {
  const got: { chunk: Int16Array; at: number }[] = []
  let error: Error | null = null
  try {
    for await (const chunk of openai.synthesizeStream!(text, { ...opts, ...o })) {
      got.push({ chunk, at: performance.now() })
      await each?.(chunk)
    }
  } catch (e) {
    error = e as Error
  }
  const samples = new Int16Array(got.reduce((n, g) => n + g.chunk.length, 0))
  let at = 0
  for (const g of got) {
    samples.set(g.chunk, at)
    at += g.chunk.length
  }
  return { got, samples, error }
}

describe('openai speech provider: streaming synthesis', () => {
  const TEXT = 'Hello there, how can I help you today?'

  it('asks for raw PCM and yields it in chunks as it arrives, at 8 and 16 kHz', async () => {
    for (const sampleRate of [8000, 16000]) {
      fake.requests.length = 0
      // Four times faster than it plays, as a TTS engine streams: about 0.6 s for 2.8 s of speech.
      fake.pcm = { chunkBytes: 4801, firstByteDelayMs: 0, speed: 4 }
      const r = await collect(TEXT, { sampleRate, voice: 'nova' })
      expect(r.error).toBeNull()
      expect(r.got.length, `${sampleRate} Hz`).toBeGreaterThan(5)
      expect(decodeToneText(r.samples, sampleRate)).toBe(TEXT)
      const [req] = fake.requests
      expect(req).toMatchObject({ method: 'POST', path: '/v1/audio/speech', authorization: `Bearer ${KEY}` })
      expect(req.fields).toEqual({ model: 'fake-tts', input: TEXT, voice: 'nova', speed: 1, response_format: 'pcm' })
      // The first audio was in hand long before the fake had sent the last of it.
      expect(req.finishedAt).toBeDefined()
      expect(r.got[0].at).toBeLessThan(req.finishedAt! - 300)
      // The same samples as the whole WAV, resampled at once.
      const whole = await openai.synthesize(TEXT, { ...opts, sampleRate, voice: 'nova' })
      expect(r.samples.length).toBe(whole.samples.length)
      expect(Buffer.compare(Buffer.from(r.samples.buffer), Buffer.from(whole.samples.buffer))).toBe(0)
    }
  })

  it('joins samples split across network chunks of any size', async () => {
    const whole = await openai.synthesize('Hi.', opts)
    for (const chunkBytes of [1, 3, 4097]) {
      fake.pcm = { chunkBytes, firstByteDelayMs: 0, speed: 0 }
      const r = await collect('Hi.')
      expect(r.error).toBeNull()
      expect(Buffer.compare(Buffer.from(r.samples.buffer), Buffer.from(whole.samples.buffer)), `${chunkBytes}`).toBe(0)
    }
  })

  it('stops at an abort mid-stream with the reason, and the server stops sending', async () => {
    fake.pcm = { chunkBytes: 4800, firstByteDelayMs: 0, speed: 1 }
    const controller = new AbortController()
    const reason = new Error('caller hung up')
    const started = performance.now()
    const r = await collect(TEXT, { signal: controller.signal }, () => controller.abort(reason))
    expect(r.error).toBe(reason)
    expect(r.got).toHaveLength(1)
    expect(performance.now() - started).toBeLessThan(1000)
    await sleep(300)
    expect(fake.requests[0].finishedAt).toBeUndefined()
  })

  it('bounds the time spent waiting on the server by SPEECH_TIMEOUT_MS, not the time spent playing', async () => {
    process.env.SPEECH_TIMEOUT_MS = '300'
    fake.pcm = { chunkBytes: 4801, firstByteDelayMs: 1500, speed: 0 }
    const started = performance.now()
    const silent = await collect(TEXT)
    expect(silent.error?.message).toMatch(
      /^\[speech\] \[openai\] POST http:\/\/127\.0\.0\.1:\d+\/v1\/audio\/speech failed \(HTTP 200, answer not finished within 300 ms\)$/,
    )
    expect(performance.now() - started).toBeLessThan(1000)
    // A caller that plays each chunk before taking the next takes longer than the bound and is not cut off:
    // six seconds of speech sent at once (at least five reads, as a socket read is at most 64 KB), 100 ms each.
    const long =
      'Thank you for calling Acme Bikes, we repair city bikes of every brand within two days, seven days a week.'
    fake.pcm = { chunkBytes: 4801, firstByteDelayMs: 0, speed: 0 }
    const start = performance.now()
    const played = await collect(long, {}, () => sleep(100))
    expect(played.error).toBeNull()
    expect(performance.now() - start).toBeGreaterThan(450)
    expect(decodeToneText(played.samples, 8000)).toBe(long)
  })

  it('makes no request for empty text and refuses text over 4,096 characters', async () => {
    expect((await collect(' \n ')).got).toEqual([])
    expect((await collect('a'.repeat(4097))).error?.message).toMatch(/over the 4096 limit/)
    expect(fake.requests).toHaveLength(0)
  })

  it('turns an HTTP error into an error naming the status and the endpoint, never the key', async () => {
    fake.failNext(500, { error: { message: `upstream broke for key ${KEY}` } })
    const r = await collect('Hello.')
    expect(r.error?.message).toMatch(/\/v1\/audio\/speech failed \(HTTP 500: upstream broke for key \[redacted\]\)/)
    expect(r.error?.message).not.toContain(KEY)
    expect(fake.requests).toHaveLength(1)
  })

  it('refuses a successful answer that is not raw PCM', async () => {
    fake.failNext(200, { not: 'audio' })
    const r = await collect('Hello.')
    expect(r.error?.message).toMatch(/failed \(HTTP 200, the answer is application\/json, not raw PCM\)/)
    expect(r.got).toEqual([])
  })

  it('names a server that is not there', async () => {
    process.env.SPEECH_BASE_URL = 'http://127.0.0.1:9/v1'
    try {
      const r = await collect('Hello.')
      expect(r.error?.message).toMatch(/POST http:\/\/127\.0\.0\.1:9\/v1\/audio\/speech failed \(no response: /)
    } finally {
      process.env.SPEECH_BASE_URL = `${fake.url}/`
    }
  })
})

// With the fake behind it, the openai provider meets the offline behaviour contract too.
describe('openai speech provider: the full contract against the fake server', () => {
  testSpeechProvider(openai, { offline: true })
})
