// The contract every capability meets, in-tree file or plugin package: the host's boot checks (names,
// schema, needs, intents), then behaviour: its JSON Schema, strict arguments, and its example run.
import { toJsonSchema } from '@valibot/to-json-schema'
import * as v from 'valibot'
import type { Capability, Notification } from '../capability.ts'
import { checkCapability } from '../checks.ts'
import { type Check, check, ensure, show } from './checks.ts'

/** The conversation outcomes a capability's result may imply (the host's summary takes these). */
export const CAPABILITY_OUTCOMES = ['resolved', 'lead_captured', 'ticket_created', 'order_placed', 'transferred']

const context = (settings: Capability['example']['settings'], notify: (n: Notification) => Promise<void>) => ({
  accountId: 'acc_contract',
  agentId: 'agt_contract',
  conversationId: 'conv_contract',
  settings,
  notify,
})

// biome-ignore lint/suspicious/noExplicitAny: any capability, whatever its parameter schema.
export function capabilityChecks(c: Capability<any>): Check[] {
  const name = `capability ${typeof c?.name === 'string' ? c.name : show(c?.name)}`
  return [
    check(`${name}: passes the host's boot checks (name, description, schema, needs, intents, run)`, () => {
      const problem = checkCapability(c)
      ensure(problem === null, `the host would refuse it at boot: ${problem}`)
    }),
    check(`${name}: its parameters publish as a JSON Schema object (what engines and GET /capabilities see)`, () => {
      const schema = toJsonSchema(c.parameters, { errorMode: 'ignore' }) as Record<string, unknown>
      ensure(schema.type === 'object', `its JSON Schema is of type ${show(schema.type)}, not object`)
      ensure(typeof schema.properties === 'object', 'its JSON Schema lists no properties')
    }),
    check(`${name}: its example arguments are valid and unknown arguments are refused`, () => {
      const ok = v.safeParse(c.parameters, c.example.args)
      ensure(ok.success, `its example.args do not parse: ${show(ok.issues?.map((i) => i.message))}`)
      const extra = v.safeParse(c.parameters, { ...(c.example.args as object), not_a_parameter: 1 })
      ensure(!extra.success, 'an unknown argument was accepted: use v.strictObject, so a typo is an error')
      for (const k of Object.keys(c.example.settings))
        ensure(c.needs.includes(k as never), `example.settings holds "${k}", which needs does not list`)
    }),
    check(
      `${name}: runs its example: ok, a message, an outcome, a record, and notifies who the settings name`,
      async () => {
        const sent: Notification[] = []
        const r = await c.run(
          context(c.example.settings, async (n) => {
            sent.push(n)
          }),
          v.parse(c.parameters, c.example.args),
        )
        ensure(r?.ok === true, `its example answered ok: ${show(r?.ok)} (${show(r?.message)})`)
        ensure(typeof r.message === 'string' && r.message.length > 0, 'its example answered no message')
        ensure(
          r.outcome === undefined || CAPABILITY_OUTCOMES.includes(r.outcome),
          `outcome ${show(r.outcome)} is none of ${CAPABILITY_OUTCOMES.join(', ')}`,
        )
        ensure(
          r.record === undefined || (typeof r.record === 'object' && r.record !== null),
          'record must be an object',
        )
        const mailKey = c.needs.find((k) => k.endsWith('_emails'))
        if (mailKey) {
          ensure(sent.length === 1, `it needs ${mailKey} but sent ${sent.length} notifications, not 1`)
          const configured = String(c.example.settings[mailKey] ?? '')
          ensure(sent[0].to.length > 0, 'its notification has no recipient')
          for (const to of sent[0].to)
            ensure(configured.includes(to), `it notified ${to}, whom ${mailKey} does not name`)
          ensure(sent[0].subject.length > 0, 'its notification has no subject')
        }
      },
    ),
    check(`${name}: without settings it still answers (ok or not) and notifies nobody`, async () => {
      let notified = 0
      const r = await c.run(
        context({}, async () => {
          notified++
        }),
        v.parse(c.parameters, c.example.args),
      )
      ensure(typeof r?.ok === 'boolean', 'it answered no ok flag')
      ensure(typeof r.message === 'string' && r.message.length > 0, 'it answered no message')
      ensure(notified === 0, `it sent ${notified} notifications with no destination configured`)
    }),
  ]
}
