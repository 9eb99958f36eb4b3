// The contract every capability file meets. plugins.test.ts runs it on each file of capabilities/.
import { toJsonSchema } from '@valibot/to-json-schema'
import * as v from 'valibot'
import { expect, it, vi } from 'vitest'
import { COMPLETION_KEYS, type Capability, type Notification } from '~/kit/capability'
import { intentProblems } from '~/domain/plugins/intents'

const OUTCOMES = ['lead_captured', 'ticket_created', 'order_placed', 'transferred', 'resolved']
// Capabilities that e-mail their record must send it to the destinations named in their needs.
const MAIL_KEYS = ['lead_emails', 'ticket_emails', 'order_emails']

export function testCapability(c: Capability) {
  it('has a snake_case name, a description and boolean flags', () => {
    expect(c.name).toMatch(/^[a-z][a-z0-9_]{1,63}$/)
    expect(c.description.length).toBeGreaterThan(10)
    expect(typeof c.apiChat).toBe('boolean')
    expect(typeof c.outbound).toBe('boolean')
  })

  it('declares its parameters as a valibot object whose JSON Schema is an object', () => {
    expect(['object', 'strict_object', 'loose_object']).toContain((c.parameters as v.GenericSchema).type)
    const schema = toJsonSchema(c.parameters, { errorMode: 'ignore' }) as Record<string, unknown>
    expect(schema.type).toBe('object')
    expect(typeof schema.properties).toBe('object')
  })

  it('needs only known completion keys, without repeats', () => {
    for (const k of c.needs) expect(COMPLETION_KEYS).toContain(k)
    expect(new Set(c.needs).size).toBe(c.needs.length)
  })

  it('declares usable intents: RE2 patterns whose groups, fixed arguments and fills are parameters', () => {
    expect(intentProblems(c)).toEqual([])
  })

  it('refuses unknown arguments', () => {
    expect(v.safeParse(c.parameters, { ...(c.example.args as object), not_a_parameter: 1 }).success).toBe(false)
  })

  it('runs its example: ok, an outcome, a record, and notifies the configured destinations', async () => {
    const args = v.parse(c.parameters, c.example.args)
    for (const k of Object.keys(c.example.settings)) expect(c.needs).toContain(k)
    const notify = vi.fn(async (_: Notification) => {})
    const r = await c.run(
      { accountId: 'acc_1', agentId: 'agt_1', conversationId: 'conv_a1', settings: c.example.settings, notify },
      args,
    )
    expect(r.ok).toBe(true)
    expect(r.message.length).toBeGreaterThan(0)
    expect(OUTCOMES).toContain(r.outcome)
    expect(r.record).toBeTypeOf('object')
    const mailKey = c.needs.find((k) => MAIL_KEYS.includes(k))
    if (mailKey) {
      expect(notify).toHaveBeenCalledTimes(1)
      const sent = notify.mock.calls[0][0]
      expect(sent.to.length).toBeGreaterThan(0)
      for (const to of sent.to)
        expect(String(c.example.settings[mailKey as keyof typeof c.example.settings])).toContain(to)
      expect(sent.subject.length).toBeGreaterThan(0)
    }
  })

  it('does not throw without settings: it answers, ok or not, and sends nothing', async () => {
    const notify = vi.fn(async () => {})
    const r = await c.run(
      { accountId: 'acc_1', agentId: 'agt_1', conversationId: null, settings: {}, notify },
      v.parse(c.parameters, c.example.args),
    )
    expect(typeof r.ok).toBe('boolean')
    expect(r.message.length).toBeGreaterThan(0)
    expect(notify).not.toHaveBeenCalled()
  })
}
