// A visitor asks to be called or written back: the lead goes to the account's lead_emails.
import * as v from 'valibot'
import { defineCapability, emailsOf } from '~/kit/capability'
import { PhoneArgument } from '~/lib/phone'

const NAME = 'capture_lead'

export default defineCapability({
  name: NAME,
  description: 'Record a visitor who wants to be contacted back, with at least an e-mail address or a phone number.',
  parameters: v.pipe(
    v.strictObject({
      name: v.optional(v.pipe(v.string(), v.maxLength(200))),
      email: v.optional(v.pipe(v.string(), v.email())),
      phone: v.optional(PhoneArgument),
      message: v.optional(v.pipe(v.string(), v.maxLength(2000))),
    }),
    v.check((a) => !!(a.email || a.phone), 'An e-mail address or a phone number is required.'),
  ),
  needs: ['lead_emails'],
  apiChat: true,
  outbound: true,
  example: {
    args: { name: 'Ada', email: 'ada@example.com', message: 'Please call me back about prices.' },
    settings: { lead_emails: ['sales@example.com'] },
  },
  // Offline: asked to be contacted and says how ("call me back on 020 7946 0958", "e-mail me at ada@example.com").
  intents: [
    {
      pattern: String.raw`\b(?:call|ring|phone|text|e-?mail|contact|reach|get back to)\s+(?:me|us)\b|\bcall\s*back\b|\bcallback\b|\bget in touch\b`,
      fill: { name: 'name', email: 'email', phone: 'phone', message: 'message' },
      oneOf: ['email', 'phone'],
    },
  ],
  async run(ctx, args) {
    const record = {
      type: 'lead',
      name: args.name ?? null,
      email: args.email ?? null,
      phone: args.phone ?? null,
      message: args.message ?? null,
    }
    const to = emailsOf(ctx.settings.lead_emails)
    // The lead is kept on the conversation even when no destination is configured yet.
    if (to.length) {
      await ctx.notify({
        to,
        subject: `New lead${args.name ? `: ${args.name}` : ''}`,
        text: [
          `Name: ${record.name ?? '-'}`,
          `E-mail: ${record.email ?? '-'}`,
          `Phone: ${record.phone ?? '-'}`,
          `Message: ${record.message ?? '-'}`,
          `Conversation: ${ctx.conversationId ?? '-'}`,
        ].join('\n'),
      })
    }
    return { ok: true, message: 'Thank you, we will get back to you shortly.', record, outcome: 'lead_captured' }
  },
})
