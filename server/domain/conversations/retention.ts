// The retention sweep: per account with transcript_retention_days set, soft-delete conversations whose
// ended_at (or started_at while still open) is older than that many days, reason 'retention', with a
// tombstone and a conversation.deleted event each. Batched: each batch is one short transaction that
// claims its rows with FOR UPDATE SKIP LOCKED, so overlapping runs never double-delete.
import { and, isNotNull, isNull, sql } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { rowsOf } from '~/db/client'
import { accounts, conversations } from '~/db/schema'
import { softDeleteRow } from './delete'

export async function sweepRetention(
  database: Database,
  opts: { now?: Date; batchSize?: number; accountId?: string } = {},
): Promise<number> {
  const now = opts.now ?? new Date()
  const batch = opts.batchSize ?? 500
  const accs = await database.db
    .select({ id: accounts.id, days: accounts.transcriptRetentionDays })
    .from(accounts)
    .where(
      and(
        isNotNull(accounts.transcriptRetentionDays),
        opts.accountId ? sql`${accounts.id} = ${opts.accountId}` : undefined,
      ),
    )
  let total = 0
  for (const acc of accs) {
    const cutoff = new Date(now.getTime() - acc.days! * 86_400_000)
    for (;;) {
      const n = await database.tx(async (tx) => {
        const rows = rowsOf<{ id: string; account_id: string }>(
          await tx.execute(sql`
          SELECT ${conversations.id} AS id, ${conversations.accountId} AS account_id FROM ${conversations}
          WHERE ${conversations.accountId} = ${acc.id} AND ${isNull(conversations.deletedAt)}
            AND ${conversations.startedAt} < ${cutoff.toISOString()}::timestamptz
            AND coalesce(${conversations.endedAt}, ${conversations.startedAt}) < ${cutoff.toISOString()}::timestamptz
          ORDER BY ${conversations.startedAt}, ${conversations.id}
          LIMIT ${batch} FOR UPDATE SKIP LOCKED`),
        )
        for (const r of rows) await softDeleteRow(tx, { id: r.id, accountId: r.account_id }, 'retention', now)
        return rows.length
      })
      total += n
      if (n < batch) break
    }
  }
  return total
}
