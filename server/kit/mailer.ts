// A mailer sends the e-mails capabilities produce (leads, tickets, orders) and password-reset links. The
// contract is the public kit's (@svc/plugin-kit); here it is narrowed to the host's database, which the
// in-tree `outbox` mailer writes to (a packaged mailer sees it as unknown).
import * as kit from '@svc/plugin-kit'
import type { Database } from '~/db/client'

export { type MailMessage, recordedText } from '@svc/plugin-kit'

export type MailContext = kit.MailContext<Database>
export type Mailer = kit.Mailer<Database>

export const defineMailer: (m: Mailer) => Mailer = kit.defineMailer
