// The contract every speech provider file meets. The shape runs for every provider; the behaviour (which
// calls the provider) only for providers that work offline, so the suite never needs a network. A provider
// that needs a server runs the behaviour part in its own test, against a fake (test/helpers/fake-speech.ts).
import { expect, it } from 'vitest'
import { synthesisStream, type Pcm, type SpeechProvider, type SynthesisOptions } from '~/kit/speech'
import { concatPcm } from '~/lib/audio'

const RATES = [8000, 16000, 24000]
const PHRASES = [
  'Hello, how can I help you today?',
  'My number is 555 0123.',
  'Yes.',
  'We open at nine on Mondays and close at six',
]
const SHORT = 'Thank you.'
const LONG = 'Thank you for calling Acme Bikes, we repair city bikes of every brand within two days.'
// Short words, so at any rate the length comes from the speaking rate, not from the text itself.
const PACED = 'We are open from nine to five on all the week days'

const options = (o: Partial<SynthesisOptions> = {}): SynthesisOptions => ({
  voice: null,
  speakingRate: 1,
  sampleRate: 16000,
  language: 'en',
  ...o,
})
const seconds = (p: Pcm) => p.samples.length / p.sampleRate
// A real engine may change case, punctuation and spacing; the words must survive.
const words = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9 ]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()

/** Every chunk of a stream, checked to be PCM16, joined. */
async function joined(chunks: AsyncIterable<Int16Array>): Promise<Int16Array> {
  const parts: Int16Array[] = []
  for await (const c of chunks) {
    expect(c).toBeInstanceOf(Int16Array)
    parts.push(c)
  }
  return concatPcm(parts)
}
/** The first index where two sample arrays differ (-1: none), so a failure names it instead of printing both. */
const firstDifference = (a: Int16Array, b: Int16Array) => {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) return i
  return -1
}

export function testSpeechProvider(p: SpeechProvider, opts: { offline: boolean }) {
  it('names itself; transcribe and synthesize are functions', () => {
    expect(p.name).toMatch(/^[a-z][a-z0-9_-]{1,63}$/)
    expect(typeof p.transcribe).toBe('function')
    expect(typeof p.synthesize).toBe('function')
  })

  if (!opts.offline) return

  it('answers PCM16 at the requested sample rate', async () => {
    for (const sampleRate of RATES) {
      const pcm = await p.synthesize(PHRASES[0], options({ sampleRate }))
      expect(pcm.samples).toBeInstanceOf(Int16Array)
      expect(pcm.sampleRate, `${sampleRate} Hz`).toBe(sampleRate)
      // A seven-word sentence takes about three seconds to say.
      expect(seconds(pcm)).toBeGreaterThan(0.5)
      expect(seconds(pcm)).toBeLessThan(15)
    }
  })

  it('round-trips text through synthesize then transcribe', async () => {
    for (const sampleRate of RATES)
      for (const text of PHRASES) {
        const pcm = await p.synthesize(text, options({ sampleRate }))
        const t = await p.transcribe(pcm, { language: 'en' })
        expect(words(t.text), `${JSON.stringify(text)} at ${sampleRate} Hz`).toBe(words(text))
        if (t.confidence !== null) {
          expect(t.confidence).toBeGreaterThanOrEqual(0)
          expect(t.confidence).toBeLessThanOrEqual(1)
        }
      }
  })

  it('takes longer for longer text and less time at a higher speaking rate', async () => {
    const short = await p.synthesize(SHORT, options())
    const long = await p.synthesize(LONG, options())
    expect(seconds(long)).toBeGreaterThan(seconds(short) * 2)
    const slow = await p.synthesize(PACED, options({ speakingRate: 0.75 }))
    const normal = await p.synthesize(PACED, options({ speakingRate: 1 }))
    const fast = await p.synthesize(PACED, options({ speakingRate: 2 }))
    expect(seconds(slow)).toBeGreaterThan(seconds(normal))
    expect(seconds(normal)).toBeGreaterThan(seconds(fast))
  })

  it('answers empty or whitespace text with empty or very short audio', async () => {
    for (const text of ['', ' ', ' \n\t ']) {
      const pcm = await p.synthesize(text, options({ sampleRate: 8000 }))
      expect(pcm.sampleRate).toBe(8000)
      expect(seconds(pcm), JSON.stringify(text)).toBeLessThanOrEqual(0.5)
    }
  })

  it('streams the same samples as synthesize() (synthesisStream)', async () => {
    for (const sampleRate of [8000, 16000])
      for (const text of [PHRASES[0], LONG, ' ']) {
        const whole = await p.synthesize(text, options({ sampleRate }))
        const streamed = await joined(synthesisStream(p, text, options({ sampleRate })))
        const what = `${JSON.stringify(text)} at ${sampleRate} Hz`
        expect(streamed.length, what).toBe(whole.samples.length)
        expect(firstDifference(streamed, whole.samples), what).toBe(-1)
      }
  })

  it('rejects a stream whose signal is aborted, with the reason', async () => {
    const reason = new Error('caller hung up')
    const signal = AbortSignal.abort(reason)
    await expect(joined(synthesisStream(p, PHRASES[0], options({ signal })))).rejects.toBe(reason)
    if (p.synthesizeStream) await expect(joined(p.synthesizeStream(LONG, options({ signal })))).rejects.toBe(reason)
  })

  it('transcribes silence and empty audio as empty text', async () => {
    for (const sampleRate of [8000, 16000]) {
      const silence = await p.transcribe({ samples: new Int16Array(sampleRate), sampleRate })
      expect(silence.text.trim()).toBe('')
      const empty = await p.transcribe({ samples: new Int16Array(0), sampleRate })
      expect(empty.text.trim()).toBe('')
    }
  })
}
