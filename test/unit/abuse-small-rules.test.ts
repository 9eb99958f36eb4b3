// Issue 30, small rules at unit level: a speech provider's audio at a sample rate outside 8–48 kHz is refused
// before resampling (Low 7: the openai provider against a local server answering WAVs with the rate it is
// told), and the address a plain `node .output/server/index.mjs` listens on (Low 4; the HTTP side is
// test/v1/abuse-small-rules.test.ts).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_HOST, listenHost } from '~/config'
import { checkSpeechRate, encodeWav } from '~/lib/audio'
import openai from '../../providers/speech/openai'
import { verifies } from '../requirements'

let server: Server
/** The rate the next /audio/speech answer's WAV header states, and how many samples it holds. */
let answer = { rate: 24_000, samples: 2400 }
const saved = { ...process.env }

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const wav = encodeWav(new Int16Array(answer.samples).fill(1000), answer.rate)
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': wav.length }).end(wav)
    })
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  process.env.SPEECH_BASE_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  process.env.SPEECH_API_KEY = 'sk-unit'
})

afterAll(async () => {
  process.env = saved
  server.closeAllConnections()
  await new Promise((ok) => server.close(ok))
})

const opts = { voice: null, speakingRate: 1, sampleRate: 8000 }

describe("a speech provider's audio rate (Low 7)", () => {
  it('refuses a WAV at 1 Hz (which resampling to 8 kHz would expand 8,000 times) or 96 kHz, naming the rate; takes 8 and 48 kHz', async () => {
    verifies('abuse.small.speech-rate')
    answer = { rate: 1, samples: 200 }
    const slow = await openai.synthesize('Hello.', opts).then(
      (pcm) => new Error(`answered ${pcm.samples.length} samples`),
      (e: Error) => e,
    )
    expect(slow.message).toMatch(/\[speech\] \[openai\] .*sample rate 1 Hz is outside 8000–48000 Hz/)
    answer = { rate: 96_000, samples: 9600 }
    await expect(openai.synthesize('Hello.', opts)).rejects.toThrow(/sample rate 96000 Hz is outside 8000–48000 Hz/)
    // The ends of the range are taken, resampled to the leg.
    answer = { rate: 8000, samples: 800 }
    expect((await openai.synthesize('Hello.', opts)).samples.length).toBe(800)
    answer = { rate: 48_000, samples: 4800 }
    expect((await openai.synthesize('Hello.', { ...opts, sampleRate: 16_000 })).samples.length).toBe(1600)
  })

  it('checkSpeechRate takes whole rates from 8 to 48 kHz only', () => {
    verifies('abuse.small.speech-rate')
    for (const ok of [8000, 16_000, 22_050, 44_100, 48_000]) expect(() => checkSpeechRate(ok)).not.toThrow()
    for (const bad of [0, 1, 7999, 48_001, 96_000, 8000.5, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => checkSpeechRate(bad), String(bad)).toThrow(RangeError)
  })
})

describe('the listening address (Low 4)', () => {
  it('is 127.0.0.1 unless NITRO_HOST or HOST names another', () => {
    verifies('abuse.small.listen-loopback')
    expect(DEFAULT_HOST).toBe('127.0.0.1')
    expect(listenHost({})).toBe('127.0.0.1')
    expect(listenHost({ HOST: '' })).toBe('127.0.0.1')
    expect(listenHost({ HOST: '0.0.0.0' })).toBe('0.0.0.0')
    expect(listenHost({ HOST: '::' })).toBe('::')
    expect(listenHost({ NITRO_HOST: '10.0.0.5', HOST: '0.0.0.0' })).toBe('10.0.0.5')
  })
})
