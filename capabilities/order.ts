// An order taken in conversation is sent to order_emails for a person to confirm; no payment happens here.
import { randomUUID } from 'node:crypto'
import * as v from 'valibot'
import { defineCapability, emailsOf } from '~/kit/capability'
import { PhoneArgument } from '~/lib/phone'

const NAME = 'place_order'

export default defineCapability({
  name: NAME,
  description: "Take an order (items and quantities) with the customer's contact details, for the business to confirm.",
  parameters: v.pipe(
    v.strictObject({
      items: v.pipe(
        v.array(
          v.strictObject({
            name: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
            quantity: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000)),
          }),
        ),
        v.minLength(1),
        v.maxLength(100),
      ),
      name: v.optional(v.pipe(v.string(), v.maxLength(200))),
      email: v.optional(v.pipe(v.string(), v.email())),
      phone: v.optional(PhoneArgument),
      notes: v.optional(v.pipe(v.string(), v.maxLength(2000))),
    }),
    v.check((a) => !!(a.email || a.phone), 'An e-mail address or a phone number is required.'),
  ),
  needs: ['order_emails'],
  apiChat: true,
  outbound: true,
  example: {
    args: { items: [{ name: 'Large pizza', quantity: 2 }], name: 'Ada', phone: '+1 202 555 0100' },
    settings: { order_emails: 'orders@example.com' },
  },
  async run(ctx, args) {
    const reference = `O-${randomUUID().slice(0, 8).toUpperCase()}`
    const record = {
      type: 'order',
      reference,
      items: args.items,
      name: args.name ?? null,
      email: args.email ?? null,
      phone: args.phone ?? null,
      notes: args.notes ?? null,
    }
    const to = emailsOf(ctx.settings.order_emails)
    if (to.length) {
      await ctx.notify({
        to,
        subject: `[${reference}] New order`,
        text: [
          ...args.items.map((i) => `${i.quantity} x ${i.name}`),
          '',
          `Name: ${record.name ?? '-'}`,
          `E-mail: ${record.email ?? '-'}`,
          `Phone: ${record.phone ?? '-'}`,
          `Notes: ${record.notes ?? '-'}`,
          `Conversation: ${ctx.conversationId ?? '-'}`,
        ].join('\n'),
      })
    }
    return {
      ok: true,
      message: `Your order ${reference} has been received; we will confirm it shortly.`,
      record,
      outcome: 'order_placed',
    }
  },
})
