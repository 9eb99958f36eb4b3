// GET /mail/outbox: the account's sent e-mails, newest first, keyset on (created_at, id).
import { and, desc, eq } from 'drizzle-orm'
import * as v from 'valibot'
import { JsonRecord } from '~/lib/schemas'
import { mailOutbox } from '~/db/schema'
import { afterPosition, keysetPage, type KeysetRequest } from '~/lib/keyset'
import type { Runtime } from '~/kit/runtime'

export const OutboxItem = v.object({
  message_id: v.string(),
  provider: v.string(),
  to: v.array(v.string()),
  subject: v.string(),
  text: v.string(),
  tags: JsonRecord(v.string(), v.string()),
  status: v.string(),
  error: v.nullable(v.string()),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
})

type Row = typeof mailOutbox.$inferSelect

const present = (r: Row) => ({
  message_id: r.id,
  provider: r.provider,
  to: r.to,
  subject: r.subject,
  text: r.text,
  tags: r.tags,
  status: r.status,
  error: r.error,
  created_at: r.createdAt.toISOString(),
})

/** Newest first; `req` is bound to filters { account_id } and sort -created_at,-id. */
export async function listOutbox(runtime: Runtime, accountId: string, req: KeysetRequest) {
  const rows = await runtime.database.db
    .select()
    .from(mailOutbox)
    .where(and(eq(mailOutbox.accountId, accountId), afterPosition(req, mailOutbox.createdAt, mailOutbox.id)))
    .orderBy(desc(mailOutbox.createdAt), desc(mailOutbox.id))
    .limit(req.binding.limit + 1)
  return keysetPage(req, rows, (r) => [r.createdAt.toISOString(), r.id], present)
}
