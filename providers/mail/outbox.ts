// The default mailer: sends nothing, stores each message in mail_outbox, where integrators read it back
// through GET /mail/outbox and tests observe what a capability sent.
import { ulid } from 'ulid'
import { defineMailer, recordedText } from '~/kit/mailer'
import { mailOutbox } from '~/db/schema'

export default defineMailer({
  name: 'outbox',
  async send(message, ctx) {
    const id = `msg_${ulid()}`
    await ctx.database.db.insert(mailOutbox).values({
      id,
      accountId: ctx.accountId,
      provider: 'outbox',
      to: message.to,
      subject: message.subject,
      text: recordedText(message),
      tags: message.tags ?? {},
      status: 'sent',
    })
    return { id }
  },
})
