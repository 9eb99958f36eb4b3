// A mailer sends the e-mails capabilities produce (leads, tickets, orders) and password-reset links.

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

/**
 * What the host passes along with a message: the account the message is sent for (null for platform mail)
 * and the host's database handle. The kit does not describe the database (it is host-internal): the
 * in-tree `outbox` mailer sees the host's type, a packaged mailer sees `unknown` and should not need it.
 */
export interface MailContext<Db = unknown> {
  database: Db
  accountId: string | null
}

export interface Mailer<Db = unknown> {
  name: string
  send(message: MailMessage, ctx: MailContext<Db>): Promise<{ id: string }>
}

export const defineMailer = <Db = unknown>(m: Mailer<Db>): Mailer<Db> => m
