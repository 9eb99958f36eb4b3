// The contract every speech provider meets. What runs depends on the mode:
// - 'full': synthesis and transcription, each checked on its own and through a round trip;
// - 'synthesis': a provider that only speaks (no transcribe); a round trip needs `hearWith`, another
//   provider that transcribes;
// - 'shape': no calls at all, for a provider that needs a network the test run does not have.
// Synthesis is checked for what a phone leg relies on: PCM16 at the requested rate that really is at that
// rate (its duration and pitch agree across 8, 16 and 24 kHz), longer text taking longer, the speaking
// rate acting, streaming giving the same samples, and aborting.
import { checkSpeechProvider } from '../checks.ts'
import { synthesisStream, type Pcm, type SpeechProvider, type SynthesisOptions } from '../speech.ts'
import { joinSamples, pitchHz, seconds, words } from './audio.ts'
import { type Check, check, ensure, show } from './checks.ts'

export interface SpeechCheckOptions {
  mode?: 'full' | 'synthesis' | 'shape'
  /** In 'synthesis' mode: a provider that transcribes what this one says, for the round trip. */
  hearWith?: SpeechProvider
  /** What is said; the default is four English sentences. Each must be at least three words. */
  phrases?: readonly string[]
  language?: string
}

const RATES = [8000, 16000, 24000]
const PHRASES = [
  'Hello, how can I help you today?',
  'My number is 555 0123.',
  'We open at nine on Mondays and close at six',
]
const SHORT = 'Thank you.'
const LONG = 'Thank you for calling Acme Bikes, we repair city bikes of every brand within two days.'
// Short words, so that at any rate the length comes from the speaking rate, not from the text itself.
const PACED = 'We are open from nine to five on all the week days'
// Duration and pitch measured at two rates may differ this much (band limits, resampler edges); a rate
// label on unresampled audio is off by 1.5× (16 vs 24 kHz) to 3× (8 vs 24 kHz).
const RATE_TOLERANCE = 1.25

const ratio = (a: number, b: number) => Math.max(a, b) / Math.min(a, b)

async function collect(chunks: AsyncIterable<Int16Array>): Promise<Int16Array> {
  const parts: Int16Array[] = []
  for await (const c of chunks) {
    ensure(c instanceof Int16Array, `a streamed chunk is ${show(Object.prototype.toString.call(c))}, not an Int16Array`)
    parts.push(c)
  }
  return joinSamples(parts)
}

const firstDifference = (a: Int16Array, b: Int16Array) => {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) return i
  return -1
}

export function speechChecks(p: SpeechProvider, opts: SpeechCheckOptions = {}): Check[] {
  const mode = opts.mode ?? 'full'
  const name = `speech provider ${typeof p?.name === 'string' ? p.name : show(p?.name)}`
  const phrases = opts.phrases ?? PHRASES
  const options = (o: Partial<SynthesisOptions> = {}): SynthesisOptions => ({
    voice: null,
    speakingRate: 1,
    sampleRate: 16000,
    language: opts.language ?? 'en',
    ...o,
  })
  const say = (text: string, o: Partial<SynthesisOptions> = {}) => p.synthesize(text, options(o))
  const hear = mode === 'full' ? p : mode === 'synthesis' ? opts.hearWith : undefined

  const checks: Check[] = [
    check(`${name}: passes the host's boot checks`, () => {
      const problem = checkSpeechProvider(p)
      ensure(problem === null, `the host would refuse it at boot: ${problem}`)
      ensure(/^[a-z][a-z0-9_-]{1,63}$/.test(p.name), `name ${show(p.name)} is not lower-case letters, digits, - or _`)
      if (mode === 'full') ensure(typeof p.transcribe === 'function', "mode 'full' needs transcribe (use 'synthesis')")
      if (mode === 'synthesis') ensure(p.transcribe === undefined, "it transcribes: check it in mode 'full'")
    }),
  ]
  if (mode === 'shape') return checks

  checks.push(
    check(`${name}: answers PCM16 at each requested rate, of a speaking length`, async () => {
      for (const sampleRate of RATES) {
        const pcm = await say(phrases[0], { sampleRate })
        ensure(pcm.samples instanceof Int16Array, `at ${sampleRate} Hz the samples are not an Int16Array`)
        ensure(pcm.sampleRate === sampleRate, `asked for ${sampleRate} Hz, answered ${pcm.sampleRate} Hz`)
        const s = seconds(pcm)
        ensure(s > 0.5 && s < 15, `${show(phrases[0])} at ${sampleRate} Hz lasts ${s.toFixed(2)} s`)
      }
    }),
    check(
      `${name}: its audio really is at the rate it is labelled (same duration and pitch at 8, 16, 24 kHz)`,
      async () => {
        const measured = []
        for (const sampleRate of RATES) {
          const pcm = await say(PACED, { sampleRate })
          const hz = pitchHz(pcm)
          ensure(hz !== null, `at ${sampleRate} Hz the audio is silent`)
          measured.push({ sampleRate, seconds: seconds(pcm), hz })
        }
        const what = measured.map((m) => `${m.sampleRate} Hz: ${m.seconds.toFixed(2)} s, ${Math.round(m.hz)} Hz pitch`)
        for (const a of measured)
          for (const b of measured) {
            ensure(
              ratio(a.seconds, b.seconds) <= RATE_TOLERANCE,
              `the same text lasts ${ratio(a.seconds, b.seconds).toFixed(2)}× longer at one rate than another (${what.join('; ')}): audio labelled with the requested rate but not resampled to it?`,
            )
            ensure(
              ratio(a.hz, b.hz) <= RATE_TOLERANCE,
              `the same text is pitched ${ratio(a.hz, b.hz).toFixed(2)}× apart at two rates (${what.join('; ')}): audio labelled with the requested rate but not resampled to it?`,
            )
          }
      },
    ),
    check(`${name}: longer text takes longer, and a higher speaking rate less time`, async () => {
      const short = seconds(await say(SHORT))
      const long = seconds(await say(LONG))
      ensure(long > short * 2, `a long sentence lasts ${long.toFixed(2)} s, a short one ${short.toFixed(2)} s`)
      const slow = seconds(await say(PACED, { speakingRate: 0.75 }))
      const normal = seconds(await say(PACED, { speakingRate: 1 }))
      const fast = seconds(await say(PACED, { speakingRate: 2 }))
      ensure(
        slow > normal && normal > fast,
        `speaking rates 0.75, 1 and 2 last ${[slow, normal, fast].map((s) => s.toFixed(2)).join(', ')} s`,
      )
    }),
    check(`${name}: empty or whitespace text is empty or very short audio at the requested rate`, async () => {
      for (const text of ['', ' ', ' \n\t ']) {
        const pcm = await say(text, { sampleRate: 8000 })
        ensure(pcm.sampleRate === 8000, `${show(text)} answered ${pcm.sampleRate} Hz`)
        ensure(seconds(pcm) <= 0.5, `${show(text)} lasts ${seconds(pcm).toFixed(2)} s`)
      }
    }),
    check(`${name}: streaming gives the same samples as synthesize()`, async () => {
      for (const sampleRate of [8000, 16000])
        for (const text of [phrases[0], LONG, ' ']) {
          const whole = (await say(text, { sampleRate })).samples
          const streamed = await collect(synthesisStream(p, text, options({ sampleRate })))
          const what = `${show(text)} at ${sampleRate} Hz`
          ensure(
            streamed.length === whole.length,
            `${what}: streamed ${streamed.length} samples, whole ${whole.length}`,
          )
          const at = firstDifference(streamed, whole)
          ensure(at === -1, `${what}: the streamed samples differ from sample ${at}`)
        }
    }),
    check(`${name}: an aborted signal rejects synthesis with its reason`, async () => {
      const reason = new Error('caller hung up')
      const signal = AbortSignal.abort(reason)
      const rejected = async (work: Promise<unknown>, what: string) => {
        let caught: unknown = null
        try {
          await work
        } catch (err) {
          caught = err
        }
        ensure(
          caught === reason,
          `${what} with an aborted signal ${caught ? `threw ${show(String(caught))}` : 'resolved'}, not the reason`,
        )
      }
      await rejected(collect(synthesisStream(p, phrases[0], options({ signal }))), 'synthesis')
      if (p.synthesizeStream) await rejected(collect(p.synthesizeStream(LONG, options({ signal }))), 'synthesizeStream')
    }),
  )

  if (hear?.transcribe) {
    const transcribe = hear.transcribe.bind(hear)
    checks.push(
      check(
        `${name}: round-trips text through synthesis and ${hear === p ? 'its own' : `${hear.name}'s`} transcription`,
        async () => {
          for (const sampleRate of RATES)
            for (const text of phrases) {
              const t = await transcribe(await say(text, { sampleRate }), { language: opts.language ?? 'en' })
              ensure(words(t.text) === words(text), `${show(text)} at ${sampleRate} Hz was heard as ${show(t.text)}`)
              ensure(
                t.confidence === null || (t.confidence >= 0 && t.confidence <= 1),
                `confidence ${t.confidence} is outside 0–1`,
              )
            }
        },
      ),
    )
  }
  if (mode === 'full' && p.transcribe) {
    const transcribe = p.transcribe.bind(p)
    checks.push(
      check(`${name}: silence and empty audio transcribe as empty text`, async () => {
        for (const sampleRate of [8000, 16000]) {
          const silence = await transcribe({ samples: new Int16Array(sampleRate), sampleRate } satisfies Pcm)
          ensure(
            silence.text.trim() === '',
            `a second of silence at ${sampleRate} Hz was heard as ${show(silence.text)}`,
          )
          const empty = await transcribe({ samples: new Int16Array(0), sampleRate })
          ensure(empty.text.trim() === '', `no audio at ${sampleRate} Hz was heard as ${show(empty.text)}`)
        }
      }),
    )
  }
  return checks
}
