// The account's call quotas (limits max_calls_per_day and max_concurrent_calls), counted for every call,
// inbound or outbound. The daily count shares quota_usage with the other daily quotas (kind `calls`), with
// the same atomic upsert. The concurrent count is the account's inbound phone conversations in progress
// plus its outbound calls ringing or in progress; deciding on it takes a per-account transaction lock, so
// two instances cannot both hand out the last line. Inbound calls that outlived the longest possible call
// (a crashed instance never ended them) no longer hold a line.
import { sql } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { rowsOf } from '~/db/client'
import { effectiveLimits, nextUtcMidnight, utcDay, type EffectiveLimits } from '~/domain/limits/quotas'

/** No call lasts longer than this (the agent setting's maximum), so older in-progress calls are stale. */
export const MAX_CALL_S = 14_400

/** Serialises line decisions of one account until the transaction ends. */
export async function lockCallLines(tx: Executor, accountId: string) {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`calls:${accountId}`}))`)
}

/** Lines in use: inbound phone conversations in progress and outbound calls ringing or in progress. */
export async function linesInUse(tx: Executor, accountId: string, now = new Date()): Promise<number> {
  const [{ n }] = rowsOf<{ n: number }>(
    await tx.execute(sql`SELECT
      (SELECT count(*) FROM conversations
        WHERE account_id = ${accountId} AND status = 'in_progress' AND deleted_at IS NULL
          AND channel = 'phone_inbound'
          AND started_at > ${new Date(now.getTime() - MAX_CALL_S * 1000).toISOString()}::timestamptz)
      + (SELECT count(*) FROM calls WHERE account_id = ${accountId} AND status IN ('ringing', 'in_progress'))
      AS n`),
  )
  return Number(n)
}

/** Takes one of today's calls; false when max_calls_per_day is used up. */
export async function takeDailyCall(tx: Executor, accountId: string, limits: EffectiveLimits, now = new Date()) {
  const taken = rowsOf<{ used: number }>(
    await tx.execute(sql`
    INSERT INTO quota_usage (account_id, day, kind, used) SELECT ${accountId}, ${utcDay(now)}, 'calls', 1
      WHERE 1 <= ${limits.maxCallsPerDay}
    ON CONFLICT (account_id, day, kind) DO UPDATE SET used = quota_usage.used + 1
    WHERE quota_usage.used + 1 <= ${limits.maxCallsPerDay}
    RETURNING used`),
  )
  return taken.length > 0
}

/** Seconds until the daily call quota resets (Retry-After of a 429). */
export const secondsToReset = (now = new Date()) =>
  Math.max(1, Math.ceil((nextUtcMidnight(now).getTime() - now.getTime()) / 1000))

/**
 * Takes a line and one of today's calls (`daily` false: the call took its daily unit earlier): null when
 * the call may proceed, else why not (`concurrency` or `quota_exceeded`). Call inside a transaction.
 */
export async function takeCallSlot(
  tx: Executor,
  database: Database,
  accountId: string,
  now = new Date(),
  daily = true,
): Promise<'quota_exceeded' | 'concurrency' | null> {
  const limits = await effectiveLimits(tx, accountId, database)
  await lockCallLines(tx, accountId)
  if ((await linesInUse(tx, accountId, now)) >= limits.maxConcurrentCalls) return 'concurrency'
  if (daily && !(await takeDailyCall(tx, accountId, limits, now))) return 'quota_exceeded'
  return null
}
