// A mailer sends the e-mails capabilities produce (leads, tickets, orders) and login links.
import type { Database } from '~/db/client'

export interface MailMessage {
  to: string[]
  subject: string
  text: string
  html?: string
  replyTo?: string
  tags?: Record<string, string>
}

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
