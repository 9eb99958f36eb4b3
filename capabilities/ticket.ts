// A support request the agent cannot resolve itself becomes a ticket sent to ticket_emails.
import { randomUUID } from 'node:crypto'
import * as v from 'valibot'
import { defineCapability, emailsOf } from '~/kit/capability'
import { PhoneArgument } from '~/lib/phone'

const NAME = 'create_ticket'

export default defineCapability({
  name: NAME,
  description: 'Open a support ticket for a problem the agent cannot solve in the conversation.',
  parameters: v.strictObject({
    subject: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
    description: v.pipe(v.string(), v.minLength(1), v.maxLength(5000)),
    email: v.optional(v.pipe(v.string(), v.email())),
    phone: v.optional(PhoneArgument),
    priority: v.optional(v.picklist(['low', 'normal', 'high']), 'normal'),
  }),
  needs: ['ticket_emails'],
  apiChat: true,
  outbound: true,
  example: {
    args: {
      subject: 'Order not delivered',
      description: 'My order from last week has not arrived.',
      email: 'ada@example.com',
    },
    settings: { ticket_emails: ['support@example.com'] },
  },
  // Offline: only when the visitor asks for a ticket or to report a problem; a question is answered instead.
  intents: [
    {
      pattern: String.raw`\b(?:open|create|file|raise|log|submit)\s+(?:a\s+|an\s+)?(?:support\s+)?(?:ticket|complaint)\b|\breport\s+(?:a\s+|an\s+)?(?:problem|issue|fault|bug)\b`,
      arguments: { subject: 'Support request' },
      fill: { description: 'message', email: 'email', phone: 'phone' },
    },
  ],
  async run(ctx, args) {
    const reference = `T-${randomUUID().slice(0, 8).toUpperCase()}`
    const record = {
      type: 'ticket',
      reference,
      subject: args.subject,
      description: args.description,
      email: args.email ?? null,
      phone: args.phone ?? null,
      priority: args.priority,
    }
    const to = emailsOf(ctx.settings.ticket_emails)
    if (to.length) {
      await ctx.notify({
        to,
        subject: `[${reference}] ${args.subject}`,
        text: [
          `Priority: ${record.priority}`,
          `E-mail: ${record.email ?? '-'}`,
          `Phone: ${record.phone ?? '-'}`,
          '',
          args.description,
          '',
          `Conversation: ${ctx.conversationId ?? '-'}`,
        ].join('\n'),
      })
    }
    return {
      ok: true,
      message: `Your ticket ${reference} has been created; our team will follow up.`,
      record,
      outcome: 'ticket_created',
    }
  },
})
