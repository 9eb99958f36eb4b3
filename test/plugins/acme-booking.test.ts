// The example plugin package (examples/plugins/acme-booking), imported from its source with @svc/plugin-kit
// aliased to the kit's source: it is a definePlugin value, and everything it holds passes the kit's contract
// suites (pluginChecks), as its own tests run them from its folder (test/integration/plugin-package.test.ts).
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { isPlugin } from '@svc/plugin-kit'
import { pluginChecks, registerChecks } from '@svc/plugin-kit/testing'
import { decodeToneSpeech, encodeToneText } from '~/lib/audio'
import type { Capability } from '~/kit/capability'
import type { SpeechProvider } from '~/kit/speech'
import plugin from '../../examples/plugins/acme-booking/index.js'
import { verifies } from '../requirements'

const bookTable = plugin.capabilities?.[0] as Capability
const acme = plugin.providers?.speech?.[0] as SpeechProvider & Required<Pick<SpeechProvider, 'transcribe'>>

describe('examples/plugins/acme-booking', () => {
  it('default-exports a definePlugin value named acme with book_table and the acme speech provider', () => {
    verifies('plugins.packages.load')
    expect(isPlugin(plugin)).toBe(true)
    expect(plugin.name).toBe('acme')
    expect(bookTable.name).toBe('book_table')
    expect(acme.name).toBe('acme')
  })

  it('book_table checks party size, date and time, and asks for what is missing', async () => {
    const parse = (args: unknown) => v.safeParse(bookTable.parameters, args)
    expect(parse({ party_size: 0, date: '2027-03-14', time: '19:30' }).success).toBe(false)
    expect(parse({ party_size: 21, date: '2027-03-14', time: '19:30' }).success).toBe(false)
    expect(parse({ party_size: 4, date: '14/03/2027', time: '19:30' }).success).toBe(false)
    expect(parse({ party_size: 4, date: '2027-03-14', time: '7pm' }).success).toBe(false)
    // An intent's capture is text: "4" is a party of 4.
    const fromIntent = parse({ party_size: '4', date: '2027-03-14', time: '19:30' })
    expect(fromIntent.success && (fromIntent.output as { party_size: number }).party_size).toBe(4)
    const ctx = { accountId: 'acc_1', agentId: 'agt_1', conversationId: null, settings: {}, notify: async () => {} }
    const asked = await bookTable.run(ctx, v.parse(bookTable.parameters, { party_size: 4 }))
    expect(asked).toMatchObject({ ok: false, message: expect.stringContaining('date') })
    expect(asked.outcome).toBeUndefined()
  })

  it("acme's audio is its own: the host's simulated codec does not read it, nor acme the host's", async () => {
    const text = 'Table for four at half past seven, please.'
    const own = await acme.synthesize(text, { voice: null, speakingRate: 1, sampleRate: 8000 })
    expect((await acme.transcribe(own)).text).toBe(text)
    expect(decodeToneSpeech(own.samples, 8000)).not.toBe(text)
    const host = { samples: encodeToneText(text, 8000), sampleRate: 8000 }
    expect((await acme.transcribe(host)).text).not.toBe(text)
  })

  describe('contract suites (pluginChecks)', () => registerChecks(pluginChecks(plugin), it))
})
