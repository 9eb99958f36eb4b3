// A mailer sends the e-mails capabilities produce (leads, tickets, orders) and password-reset links.
import type { Database } from '~/db/client'

export interface MailMessage {
  to: string[]
  subject: string
  text: string
  html?: string
  replyTo?: string
  tags?: Record<string, string>
  /** Secrets the text carries (a password-reset token): delivered, never stored. The copy a mailer keeps in
   *  mail_outbox holds the text with each of them withheld (recordedText). */
  secrets?: string[]
}

/** The text a mailer stores for `message`: its secrets withheld, so a database read yields no live link. */
export const recordedText = (message: MailMessage): string =>
  (message.secrets ?? []).reduce(
    (text, secret) => (secret ? text.replaceAll(secret, '[withheld]') : text),
    message.text,
  )

/** What the host passes along with a message: the database (the default `outbox` mailer stores there)
 *  and the account the message is sent for (null for platform mail). */
export interface MailContext {
  database: Database
  accountId: string | null
}

export interface Mailer {
  name: string
  send(message: MailMessage, ctx: MailContext): Promise<{ id: string }>
}

export const defineMailer = (m: Mailer): Mailer => m
