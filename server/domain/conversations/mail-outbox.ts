// GET /mail/outbox: the account's sent e-mails, newest first, keyset on (created_at, id).
import { and, desc, eq } from 'drizzle-orm'
import type { H3Event } from 'h3'
import * as v from 'valibot'
import { mailOutbox } from '~/db/schema'
import { afterPosition, keysetPage } from '~/lib/keyset'
import { keysetRequest } from '~/http/keyset'
import type { Runtime } from '~/kit/runtime'
import type { Principal } from '~/domain/credentials/principal'

export const OutboxItem = v.object({
  message_id: v.string(),
  provider: v.string(),
  to: v.array(v.string()),
  subject: v.string(),
  text: v.string(),
  tags: v.record(v.string(), v.string()),
  status: v.string(),
  error: v.nullable(v.string()),
  created_at: v.string(),
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

export async function listOutbox(
  event: H3Event,
  runtime: Runtime,
  principal: Principal,
  accountId: string,
  query: { limit: number; cursor?: string },
) {
  const req = await keysetRequest({
    event,
    principal,
    filters: { account_id: accountId },
    sort: '-created_at,-id',
    limit: query.limit,
    cursor: query.cursor,
    secret: runtime.config.secret,
  })
  const rows = await runtime.database.db
    .select()
    .from(mailOutbox)
    .where(and(eq(mailOutbox.accountId, accountId), afterPosition(req, mailOutbox.createdAt, mailOutbox.id)))
    .orderBy(desc(mailOutbox.createdAt), desc(mailOutbox.id))
    .limit(query.limit + 1)
  return keysetPage(req, rows, (r) => [r.createdAt.toISOString(), r.id], present)
}
