// The account's call quotas (limits max_calls_per_day and max_concurrent_calls), counted for every call,
// inbound or outbound. The daily count shares quota_usage with the other daily quotas (kind `calls`), with
// the same atomic upsert; the concurrent count is the account's phone conversations still in progress.
// Calls that outlived their longest possible duration (a crashed instance never ended them) no longer
// hold a slot.
import { sql } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { rowsOf } from '~/db/client'
import { effectiveLimits, utcDay } from '~/domain/limits/quotas'

/** No call lasts longer than this (the agent setting's maximum), so older in-progress calls are stale. */
export const MAX_CALL_S = 14_400

/** Takes a call slot: null when the call may proceed, else why not (`quota_exceeded` or `concurrency`). */
export async function takeCallSlot(
  tx: Executor,
  database: Database,
  accountId: string,
  now = new Date(),
): Promise<'quota_exceeded' | 'concurrency' | null> {
  const limits = await effectiveLimits(tx, accountId, database)
  const [{ n }] = rowsOf<{ n: number }>(
    await tx.execute(sql`SELECT count(*)::int AS n FROM conversations
      WHERE account_id = ${accountId} AND status = 'in_progress' AND deleted_at IS NULL
        AND channel IN ('phone_inbound', 'phone_outbound')
        AND started_at > ${new Date(now.getTime() - MAX_CALL_S * 1000).toISOString()}::timestamptz`),
  )
  if (Number(n) >= limits.maxConcurrentCalls) return 'concurrency'
  const taken = rowsOf<{ used: number }>(
    await tx.execute(sql`
    INSERT INTO quota_usage (account_id, day, kind, used) SELECT ${accountId}, ${utcDay(now)}, 'calls', 1
      WHERE 1 <= ${limits.maxCallsPerDay}
    ON CONFLICT (account_id, day, kind) DO UPDATE SET used = quota_usage.used + 1
    WHERE quota_usage.used + 1 <= ${limits.maxCallsPerDay}
    RETURNING used`),
  )
  return taken.length ? null : 'quota_exceeded'
}
