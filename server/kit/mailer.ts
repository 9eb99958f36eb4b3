// A mailer sends the e-mails capabilities produce (leads, tickets, orders) and login links.
export interface MailMessage { to: string[]; subject: string; text: string; html?: string; replyTo?: string; tags?: Record<string, string> }

export interface Mailer {
  name: string
  send(message: MailMessage): Promise<{ id: string }>
}

export const defineMailer = (m: Mailer): Mailer => m
