import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { defineCapability } from '~/kit/capability'
import { defineMailer } from '~/kit/mailer'
import { createRegistries } from '~/kit/registries'
import { PluginError } from '~/kit/registry'
import { verifies } from '../requirements'

const capability = (name: string, extra: Record<string, unknown> = {}) =>
  defineCapability({
    name,
    description: 'Books a table for a party on a date and a time.',
    parameters: v.strictObject({ party_size: v.number() }),
    needs: [],
    apiChat: true,
    outbound: false,
    example: { args: { party_size: 2 }, settings: {} },
    run: async () => ({ ok: true, message: 'Booked.' }),
    ...extra,
  })

describe('plugin registries', () => {
  it('reject a duplicate name with a message naming the kind and the name', () => {
    verifies('plugins.registry')
    const { mail } = createRegistries()
    const a = defineMailer({ name: 'outbox', send: async () => ({ id: '1' }) })
    mail.register(a)
    expect(() => mail.register({ ...a })).toThrow('[registry] [mailer] duplicate mailer name "outbox"')
    expect(mail.require('outbox')).toBe(a)
    expect(() => mail.require('smtp')).toThrow(/no mailer named "smtp"/)
  })

  it('name both files of an in-tree duplicate, in one line', () => {
    verifies('plugins.packages.duplicate', 'plugins.packages.boot-errors')
    const { capabilities } = createRegistries()
    capabilities.registerAll([capability('book_table')], ['capabilities/order.ts'])
    const err = (() => {
      try {
        capabilities.register(capability('book_table'), 'capabilities/acme/book.ts')
      } catch (e) {
        return e as Error
      }
    })()
    expect(err).toBeInstanceOf(PluginError)
    expect(err?.message).toBe(
      '[plugins] capabilities/acme/book.ts: capability "book_table" is already defined by capabilities/order.ts',
    )
    expect(capabilities.originOf('book_table')).toBe('capabilities/order.ts')
  })

  it('check every plugin as it registers: a capability without a description or a valibot object schema is refused', () => {
    verifies('plugins.packages.boot-errors')
    const { capabilities, speech } = createRegistries()
    const origin = 'SVC_PLUGINS "acme-booking" (plugin acme)'
    expect(() => capabilities.register(capability('book_table', { description: '' }), origin)).toThrow(
      `[plugins] ${origin}: capability "book_table": description must be a non-empty string`,
    )
    expect(() => capabilities.register(capability('book_table', { parameters: v.string() }), origin)).toThrow(
      /parameters must be a valibot object schema/,
    )
    expect(() => capabilities.register(capability('Book Table'), origin)).toThrow(/name must be snake_case/)
    expect(() => capabilities.register(capability('book_table', { needs: ['fax_number'] }), origin)).toThrow(
      /needs "fax_number", which is no completion key/,
    )
    expect(() =>
      speech.register({ name: 'acme', transcribe: async () => ({ text: '', confidence: null }) } as never, origin),
    ).toThrow(`[plugins] ${origin}: speech provider "acme": synthesize must be a function`)
    // Nothing refused was registered; a valid one still is.
    expect(capabilities.list()).toEqual([])
    capabilities.register(capability('book_table'), origin)
    expect(capabilities.get('book_table')?.name).toBe('book_table')
  })
})
