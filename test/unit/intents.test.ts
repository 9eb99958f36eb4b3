// Capability intents are checked as the registry takes each capability (the kit's checkCapability): a bad
// one stops the boot with one line that names where it came from, the capability and the problem, before
// any visitor's turn could fail on it.
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { defineCapability } from '~/kit/capability'
import type { CapabilityIntent } from '~/kit/intents'
import { intentProblems } from '~/domain/plugins/intents'
import { createRegistries } from '~/kit/registries'
import { PluginError } from '~/kit/registry'
import { verifies } from '../requirements'

/** Registers the capability as the boot does a packaged one (the registry runs the kit's checks). */
const register = (c: ReturnType<typeof withIntents>) =>
  createRegistries().capabilities.register(c, 'SVC_PLUGINS "acme-booking" (plugin acme)')

const withIntents = (intents: unknown) =>
  defineCapability({
    name: 'book_table',
    description: 'Ask for a table booking, for the restaurant to confirm.',
    parameters: v.strictObject({
      people: v.pipe(v.number(), v.integer(), v.minValue(1)),
      time: v.string(),
      phone: v.string(),
    }),
    needs: [],
    apiChat: true,
    outbound: false,
    example: { args: { people: 2, time: '19:30', phone: '+1 202 555 0100' }, settings: {} },
    intents: intents as CapabilityIntent[],
    async run() {
      return { ok: true, message: 'ok' }
    },
  })

describe('intent validation', () => {
  it('accepts RE2 patterns whose groups are parameters, examples, fixed arguments, fills and oneOf', () => {
    verifies('plugins.intents.validation')
    const good = withIntents([
      { pattern: String.raw`table for (?P<people>\d+) at (?<time>\d{1,2}:\d{2})`, fill: { phone: 'phone' } },
      { examples: ['I would like to book a table'], arguments: { people: 2 }, oneOf: ['phone'] },
    ])
    expect(intentProblems(good)).toEqual([])
    expect(intentProblems(withIntents(undefined))).toEqual([])
    expect(() => register(good)).not.toThrow()
  })

  it('refuses each kind of mistake with a message that says which intent and what', () => {
    verifies('plugins.intents.validation')
    const cases: [unknown, RegExp][] = [
      [{ pattern: String.raw`(\w+) \1` }, /intent 1: its pattern is not RE2 syntax .*\\1/],
      [{ pattern: '(?=table)table' }, /not RE2 syntax.*\(\?=/],
      [{ pattern: '[' }, /not RE2 syntax/],
      [{ pattern: String.raw`\w{1000}\d{1000}` }, /too complex \(\d+ RE2 instructions, at most 2000\)/],
      [
        { pattern: String.raw`for (?P<guests>\d+)` },
        /group "guests" is not a parameter \(parameters: people, time, phone\)/,
      ],
      [{ examples: ['book a table'], arguments: { seats: 2 } }, /argument "seats" is not a parameter/],
      [{ examples: ['book a table'], fill: { mobile: 'phone' } }, /fill "mobile" is not a parameter/],
      [
        { examples: ['book a table'], fill: { phone: 'telephone' } },
        /fill "phone" reads "telephone", not one of email, phone, name, message/,
      ],
      [{ examples: ['book a table'], oneOf: ['email'] }, /oneOf "email" is not a parameter/],
      [{ arguments: { people: 2 } }, /intent 1: needs a pattern or examples/],
      [{ examples: ['12:30'] }, /example "12:30" must be words/],
      [{ pattern: 'table', regex: 'x' }, /unknown key "regex"/],
      ['table', /intent 1: must be an object/],
    ]
    for (const [intent, message] of cases) {
      const c = withIntents([intent])
      expect(intentProblems(c).join('; '), JSON.stringify(intent)).toMatch(message)
      expect(() => register(c)).toThrow(PluginError)
    }
    expect(intentProblems(withIntents('table'))).toEqual(['intents must be a list'])
    const heavy = Array.from({ length: 4 }, () => ({ pattern: String.raw`(?:[a-z]{0,190}[0-9]{0,190}){2}x` }))
    expect(intentProblems(withIntents(heavy))).toEqual([
      expect.stringMatching(/^its patterns together are too complex \(\d+ RE2 instructions, at most 5000\)$/),
    ])
    expect(intentProblems(withIntents([{ examples: ['book'] }, { pattern: '(?P<x>a)' }]))[0]).toMatch(/^intent 2: /)
  })

  it('the boot error is one line naming the package, the capability and the problem', () => {
    verifies('plugins.intents.validation')
    let message = ''
    try {
      register(withIntents([{ pattern: String.raw`for (?P<guests>\d+)` }]))
    } catch (e) {
      message = (e as Error).message
    }
    expect(message).toBe(
      '[plugins] SVC_PLUGINS "acme-booking" (plugin acme): capability "book_table": intent 1: its pattern\'s group "guests" is not a parameter (parameters: people, time, phone)',
    )
    expect(message).not.toContain('\n')
  })
})
