// Runs the speech contract on every file in providers/speech, found the way the boot manifest finds them
// (".ts", not starting with "_"), until test/contract/plugins.test.ts loads the speech kind itself.
import { readdirSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SpeechProvider } from '~/kit/speech'
import { testSpeechProvider } from '../contract/speech.contract'

const DIR = resolve(import.meta.dirname, '../../providers/speech')
// Providers whose calls need no network; the others get the shape contract here and the behaviour in their
// own test against a fake server (openai: test/plugins/openai-speech.test.ts).
const OFFLINE = new Set(['simulated'])

const providers = await Promise.all(
  readdirSync(DIR)
    .filter((n) => n.endsWith('.ts') && !n.startsWith('_'))
    .sort()
    .map(async (file) => ({ file, plugin: (await import(resolve(DIR, file))).default as SpeechProvider })),
)

describe('speech provider files', () => {
  it('include simulated and openai, each with a unique name', () => {
    const names = providers.map((x) => x.plugin?.name)
    expect(names).toEqual(expect.arrayContaining(['simulated', 'openai']))
    expect(new Set(names).size).toBe(names.length)
  })
})

for (const { file, plugin } of providers)
  describe(`providers/speech/${file}`, () => testSpeechProvider(plugin, { offline: OFFLINE.has(plugin.name) }))
