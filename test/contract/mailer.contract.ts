// The contract every mailer file meets. plugins.test.ts runs it on each file of providers/mail/, with a
// migrated database of its own in the MailContext (the outbox mailer stores there; others may ignore it).
import { expect, it } from 'vitest'
import { eq } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { mailOutbox } from '~/db/schema'
import type { Mailer } from '~/kit/mailer'

/** A mailer that sends somewhere real gets a receiver: it answers what arrived for a message id. */
export interface MailReceiver {
  arrived(id: string): { to: string[]; subject: string | null } | undefined
}

export function testMailer(m: Mailer, opts: { offline: boolean; database: () => Database; receiver?: MailReceiver }) {
  it('names itself', () => {
    expect(m.name).toMatch(/^[a-z][a-z0-9_-]{1,63}$/)
    expect(typeof m.send).toBe('function')
  })

  it.skipIf(!opts.offline && !opts.receiver)(
    'sends a message and answers its id; every mailer records it in mail_outbox',
    async () => {
      const database = opts.database()
      const sent = await m.send(
        {
          to: ['sales@example.com'],
          subject: 'New lead: Ada',
          text: 'E-mail: ada@example.com',
          tags: { capability: 'capture_lead' },
        },
        { database, accountId: null },
      )
      expect(typeof sent.id).toBe('string')
      expect(sent.id.length).toBeGreaterThan(0)
      const [row] = await database.db.select().from(mailOutbox).where(eq(mailOutbox.id, sent.id))
      expect(row).toMatchObject({
        provider: m.name,
        to: ['sales@example.com'],
        subject: 'New lead: Ada',
        status: 'sent',
        error: null,
        tags: { capability: 'capture_lead' },
      })
      if (opts.receiver)
        expect(opts.receiver.arrived(sent.id)).toMatchObject({ to: ['sales@example.com'], subject: 'New lead: Ada' })
    },
  )
}
