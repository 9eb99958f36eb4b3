// SMTP through nodemailer, chosen with SVC_MAIL=smtp and SMTP_URL (smtp://user:pass@host:port, smtps://
// for implicit TLS; nodemailer reads query options such as ?ignoreTLS=true). Every message is also a
// mail_outbox row, so GET /mail/outbox shows what left and what did not: written `queued` before the
// SMTP exchange (a crash mid-send stays visible), then `sent`, or `failed` with the server's error — and
// the failure is thrown, so the capability that asked for the e-mail reports ok: false.
import nodemailer, { type Transporter } from 'nodemailer'
import { eq } from 'drizzle-orm'
import { ulid } from 'ulid'
import { loadConfig } from '~/config'
import { mailOutbox } from '~/db/schema'
import { defineMailer, recordedText } from '~/kit/mailer'

const transports = new Map<string, Transporter>()

function transportFor(url: string): Transporter {
  let t = transports.get(url)
  if (!t) {
    // Bounded, so an unreachable server fails the tool well inside the 60 s turn claim.
    t = nodemailer.createTransport(url, {
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    } as never)
    transports.set(url, t)
  }
  return t
}

export default defineMailer({
  name: 'smtp',
  async send(message, ctx) {
    const { smtpUrl, smtpFrom } = loadConfig()
    const id = `msg_${ulid()}`
    const db = ctx.database.db
    await db.insert(mailOutbox).values({
      id,
      accountId: ctx.accountId,
      provider: 'smtp',
      to: message.to,
      subject: message.subject,
      text: recordedText(message),
      tags: message.tags ?? {},
      status: 'queued',
    })
    try {
      if (!smtpUrl) throw new Error('SMTP_URL is not set.')
      await transportFor(smtpUrl).sendMail({
        from: smtpFrom,
        to: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
        replyTo: message.replyTo,
        // The outbox id travels along, so a received message can be matched to its row.
        headers: { 'X-Svc-Message-Id': id },
      })
    } catch (err) {
      const error = (err instanceof Error ? err.message : String(err)).slice(0, 1000)
      await db.update(mailOutbox).set({ status: 'failed', error }).where(eq(mailOutbox.id, id))
      throw new Error(`The e-mail could not be sent: ${error}`)
    }
    await db.update(mailOutbox).set({ status: 'sent' }).where(eq(mailOutbox.id, id))
    return { id }
  },
})
