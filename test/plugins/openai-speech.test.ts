// The openai speech provider against a local fake server speaking the OpenAI audio protocol with tone text
// (test/helpers/fake-speech.ts): real multipart and WAV on the wire, no network.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
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

// With the fake behind it, the openai provider meets the offline behaviour contract too.
describe('openai speech provider: the full contract against the fake server', () => {
  testSpeechProvider(openai, { offline: true })
})
