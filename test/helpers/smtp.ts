// A real SMTP receiver (smtp-server) on a free local port for the SMTP mailer's tests: plain SMTP with
// AUTH required (insecure auth allowed on loopback), so the credentials of the URL are exercised.
import { SMTPServer } from 'smtp-server'
import type { AddressInfo } from 'node:net'

export interface ReceivedMail {
  from: string
  to: string[]
  user: string | undefined
  raw: string
  subject: string | null
  header(name: string): string | null
}
export interface SmtpReceiver {
  url: string
  port: number
  received: ReceivedMail[]
  close(): Promise<void>
}

/** Unfolds the header block and answers one header's value (enough for Subject and X- headers). */
function headerOf(raw: string, name: string): string | null {
  const head = raw.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ')
  const m = new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)
  return m ? m[1].trim() : null
}

export async function startSmtpReceiver(opts: { user?: string; pass?: string } = {}): Promise<SmtpReceiver> {
  const user = opts.user ?? 'mailer'
  const pass = opts.pass ?? 'secret-pass'
  const received: ReceivedMail[] = []
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === user && auth.password === pass) cb(null, { user })
      else cb(new Error('Invalid username or password'))
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          user: typeof session.user === 'string' ? session.user : undefined,
          raw,
          subject: headerOf(raw, 'Subject'),
          header: (n) => headerOf(raw, n),
        })
        cb()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const port = (server.server.address() as AddressInfo).port
  return {
    url: `smtp://${encodeURIComponent(user)}:${encodeURIComponent(pass)}@127.0.0.1:${port}`,
    port,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
