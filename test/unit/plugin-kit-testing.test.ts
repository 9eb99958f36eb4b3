// The kit's contract suites (@svc/plugin-kit/testing) as a plugin author meets them: they find what the
// build finds, they fail what they should (a broken capability in a subfolder, audio labelled with a rate
// it is not at), and a synthesis-only speech provider has a mode of its own that the boot agrees with.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { capabilityChecks, pitchHz, runChecks, speechChecks } from '@svc/plugin-kit/testing'
import { loadConfig } from '~/config'
import { ProviderConfigError, resolveProviders } from '~/kit/providers'
import { createRegistries } from '~/kit/registries'
import { defineSpeechProvider, type SpeechProvider } from '~/kit/speech'
import fsBlobs from '../../providers/blob/fs'
import local from '../../providers/chat/local'
import outbox from '../../providers/mail/outbox'
import simulated from '../../providers/speech/simulated'
import simulatedTelephony from '../../providers/telephony/simulated'
import { pluginFiles } from '../../scripts/plugin-files.mjs'
import { verifies } from '../requirements'

const ROOT = resolve(import.meta.dirname, '../..')
// Under the repository (gitignored), so the files import valibot and the kit as in-tree plugins do.
const scratch = mkdtempSync(join(ROOT, '.data', 'plugin-files-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const failed = async (checks: Parameters<typeof runChecks>[0]) =>
  (await runChecks(checks)).filter((r) => !r.ok).map((r) => `${r.name} — ${r.error}`)

describe('plugin files: one finder for the build and the contract test', () => {
  it('finds .ts files at any depth, sorted, without "_" helpers; the build and the contract test both use it', () => {
    verifies('plugins.contract.finder')
    const dir = join(scratch, 'capabilities')
    mkdirSync(join(dir, 'acme'), { recursive: true })
    for (const f of ['acme/book.ts', 'acme/_shared.ts', '_helpers.ts', 'order.ts', 'notes.md', 'types.d.ts'])
      writeFileSync(join(dir, f), '')
    expect(pluginFiles(dir)).toEqual(['acme/book.ts', 'order.ts'])
    expect(pluginFiles(join(scratch, 'nothing-here'))).toEqual([])
    // The build's manifests and the contract test call it, so they cannot disagree again.
    expect(readFileSync(join(ROOT, 'nitro.config.ts'), 'utf8')).toMatch(/const files = pluginFiles\(dir\)/)
    expect(readFileSync(join(ROOT, 'test/contract/plugins.test.ts'), 'utf8')).toMatch(
      /pluginFiles\(resolve\(ROOT, dir\)\)/,
    )
  })

  it('a broken capability at capabilities/acme/book.ts passes the boot checks but fails its contract', async () => {
    verifies('plugins.contract.finder', 'plugins.contract.kit-suites')
    const dir = join(scratch, 'broken', 'capabilities')
    mkdirSync(join(dir, 'acme'), { recursive: true })
    // Served by the build (the boot checks only the shape), wrong in behaviour: it takes unknown arguments
    // and its own example fails.
    writeFileSync(
      join(dir, 'acme/book.ts'),
      `import * as v from 'valibot'
import { defineCapability } from '@svc/plugin-kit'
export default defineCapability({
  name: 'book_table',
  description: 'Books a table for a party.',
  parameters: v.object({ party_size: v.number() }),
  needs: [],
  apiChat: true,
  outbound: false,
  example: { args: { party_size: 4 }, settings: {} },
  run: async () => ({ ok: false, message: '' }),
})
`,
    )
    const [file] = pluginFiles(dir)
    expect(file).toBe('acme/book.ts')
    const book = (await import(join(dir, file))).default
    const failures = await failed(capabilityChecks(book))
    expect(failures).toEqual([
      expect.stringMatching(/unknown arguments are refused — an unknown argument was accepted: use v.strictObject/),
      expect.stringMatching(/runs its example.* — its example answered ok: false/),
      expect.stringMatching(/without settings it still answers.* — it answered no message/),
    ])
  })
})

describe('the speech suite', () => {
  const say = simulated.synthesize.bind(simulated)

  it('fails audio labelled with the requested rate that was never resampled (duration and pitch)', async () => {
    verifies('plugins.contract.speech-rate', 'plugins.contract.kit-suites')
    // The classic bug: the engine speaks at 22,050 Hz and the provider passes the samples on unchanged.
    const unresampled = defineSpeechProvider({
      name: 'lazy',
      transcribe: simulated.transcribe,
      async synthesize(text, opts) {
        const native = await say(text, { ...opts, sampleRate: 22050 })
        return { samples: native.samples, sampleRate: opts.sampleRate }
      },
    })
    const failures = await failed(speechChecks(unresampled))
    const rate = failures.find((f) => f.includes('really is at the rate it is labelled'))
    expect(rate).toMatch(/lasts 2\.\d+× longer at one rate than another .*not resampled to it\?/)
    // Measured, not guessed: at 8 kHz it would play 2.76× slow and as many times low.
    const at8k = await unresampled.synthesize('We are open from nine to five', {
      voice: null,
      speakingRate: 1,
      sampleRate: 8000,
    })
    const right = await simulated.synthesize('We are open from nine to five', {
      voice: null,
      speakingRate: 1,
      sampleRate: 8000,
    })
    expect(at8k.samples.length / right.samples.length).toBeCloseTo(22050 / 8000, 1)
    expect(pitchHz(right)! / pitchHz(at8k)!).toBeGreaterThan(2)
    // The simulated provider resamples (its tones are synthesized at the rate asked): every check passes.
    expect(await failed(speechChecks(simulated))).toEqual([])
  })

  it('checks a synthesis-only provider in its own mode, and the boot refuses it as SVC_STT', async () => {
    verifies('plugins.contract.synthesis-only', 'plugins.contract.kit-suites')
    const speaker: SpeechProvider = defineSpeechProvider({ name: 'speaker', synthesize: say })
    const synthesis = speechChecks(speaker, { mode: 'synthesis', hearWith: simulated })
    expect(synthesis.map((c) => c.name)).toContainEqual(
      expect.stringMatching(/round-trips text through synthesis and simulated's transcription/),
    )
    expect(await failed(synthesis)).toEqual([])
    expect(await failed(speechChecks(speaker))).toEqual([expect.stringMatching(/mode 'full' needs transcribe/)])
    // A provider that does transcribe is checked in full.
    expect(await failed(speechChecks(simulated, { mode: 'synthesis' }))).toEqual([
      expect.stringMatching(/it transcribes: check it in mode 'full'/),
    ])

    const registries = createRegistries()
    registries.chat.register(local)
    registries.mail.register(outbox)
    registries.telephony.register(simulatedTelephony)
    registries.blob.register(fsBlobs)
    registries.speech.registerAll([simulated, speaker])
    // loadConfig answers the process's config once; each case is that config with its speech settings.
    const base = loadConfig({ SVC_SECRET: `test-secret-${'x'.repeat(40)}`, SVC_DATA_DIR: scratch })
    const config = (env: { SVC_SPEECH: string; SVC_STT?: string; SVC_TTS?: string }) => ({
      ...base,
      chatEngine: 'local',
      mail: 'outbox',
      telephony: 'simulated',
      speech: env.SVC_SPEECH,
      stt: env.SVC_STT ?? env.SVC_SPEECH,
      tts: env.SVC_TTS ?? env.SVC_SPEECH,
    })
    // As SVC_TTS it serves calls' speech; the simulated provider hears them.
    const ok = resolveProviders(registries, config({ SVC_SPEECH: 'simulated', SVC_TTS: 'speaker' }))
    expect(ok.tts.name).toBe('speaker')
    expect(ok.stt.name).toBe('simulated')
    let refused: unknown = null
    try {
      resolveProviders(registries, config({ SVC_SPEECH: 'simulated', SVC_STT: 'speaker' }))
    } catch (err) {
      refused = err
    }
    expect(refused).toBeInstanceOf(ProviderConfigError)
    expect((refused as Error).message).toBe(
      '[config] SVC_STT="speaker" synthesizes only (no transcribe): set SVC_STT to a provider that transcribes (simulated)',
    )
  })
})
