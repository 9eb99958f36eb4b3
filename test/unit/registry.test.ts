import { describe, expect, it } from 'vitest'
import { createRegistries } from '~/kit/registries'
import { defineMailer } from '~/kit/mailer'
import { verifies } from '../requirements'

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
})
