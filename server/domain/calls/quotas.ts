// The account's call quotas. Outbound calls count against max_calls_per_day (quota_usage kind `calls`);
// inbound calls against their own inbound_calls_per_day (kind `inbound_calls`), never the outbound one, and
// one caller number may open at most inbound_calls_per_caller_per_hour of them (decisions, Security rules
// "Inbound quotas"). Both daily counts share quota_usage with the other daily quotas, with the same atomic
// upsert. max_concurrent_calls counts every call: the account's inbound phone conversations in progress
// plus its outbound calls ringing or in progress; deciding on it takes a per-account transaction lock, so
// two instances cannot both hand out the last line. Inbound calls that outlived the longest possible call
// (a crashed instance never ended them) no longer hold a line.
import { sql } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { rowsOf } from '~/db/client'
import {
  DEFAULT_CALL_LIMITS,
  effectiveLimits,
  nextUtcMidnight,
  utcDay,
  type EffectiveLimits,
} from '~/domain/limits/quotas'

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
          AND channel = 'phone_inbound' AND test_run_id IS NULL
          AND started_at > ${new Date(now.getTime() - MAX_CALL_S * 1000).toISOString()}::timestamptz)
      + (SELECT count(*) FROM calls WHERE account_id = ${accountId} AND status IN ('ringing', 'in_progress'))
      AS n`),
  )
  return Number(n)
}

/** Takes one unit of a daily call quota (quota_usage kind `calls` or `inbound_calls`); false when used up. */
async function takeDaily(tx: Executor, accountId: string, kind: 'calls' | 'inbound_calls', limit: number, now: Date) {
  const taken = rowsOf<{ used: number }>(
    await tx.execute(sql`
    INSERT INTO quota_usage (account_id, day, kind, used) SELECT ${accountId}, ${utcDay(now)}, ${kind}, 1
      WHERE 1 <= ${limit}
    ON CONFLICT (account_id, day, kind) DO UPDATE SET used = quota_usage.used + 1
    WHERE quota_usage.used + 1 <= ${limit}
    RETURNING used`),
  )
  return taken.length > 0
}

/** Takes one of today's calls; false when max_calls_per_day is used up. */
export const takeDailyCall = (tx: Executor, accountId: string, limits: EffectiveLimits, now = new Date()) =>
  takeDaily(tx, accountId, 'calls', limits.maxCallsPerDay, now)

/** Seconds until the daily call quota resets (Retry-After of a 429). */
export const secondsToReset = (now = new Date()) =>
  Math.max(1, Math.ceil((nextUtcMidnight(now).getTime() - now.getTime()) / 1000))

/** Takes one of today's inbound calls; false when inbound_calls_per_day is used up. */
export const takeDailyInboundCall = (tx: Executor, accountId: string, limits: EffectiveLimits, now = new Date()) =>
  takeDaily(tx, accountId, 'inbound_calls', limits.inboundCallsPerDay, now)

/** Inbound calls the account took today (quota_usage kind `inbound_calls`). */
export async function inboundCallsToday(ex: Executor, accountId: string, now = new Date()): Promise<number> {
  const [row] = rowsOf<{ used: number }>(
    await ex.execute(sql`SELECT used FROM quota_usage
      WHERE account_id = ${accountId} AND day = ${utcDay(now)} AND kind = 'inbound_calls'`),
  )
  return Number(row?.used ?? 0)
}

/** The failure_reason of an inbound call refused because its caller called too often. */
export const CALLER_RATE_LIMITED = 'caller_rate_limited'

/**
 * Inbound calls from `caller` to the account in the hour before `now`: every call that reached the account
 * (answered or refused, each one a conversation and a summary), except those refused by this very rule, so
 * a caller who keeps redialling is let in again an hour after the calls that counted.
 */
export async function callerCallsLastHour(ex: Executor, accountId: string, caller: string, now = new Date()) {
  const [{ n }] = rowsOf<{ n: number }>(
    await ex.execute(sql`SELECT count(*)::int AS n FROM conversations
      WHERE account_id = ${accountId} AND channel = 'phone_inbound'
        AND started_at > ${new Date(now.getTime() - 3_600_000).toISOString()}::timestamptz
        AND identity->>'phone_e164' = ${caller}
        AND coalesce(metrics->>'failure_reason', '') <> ${CALLER_RATE_LIMITED}`),
  )
  return Number(n)
}

/**
 * An inbound call's admission, inside its transaction under the account's line lock: null when the call
 * may proceed (it took a line and one of today's inbound calls), else why not: `caller_rate_limited` (the
 * caller's hourly calls), `concurrency` (max_concurrent_calls) or `quota_exceeded` (inbound_calls_per_day).
 */
export async function takeInboundSlot(
  tx: Executor,
  database: Database,
  accountId: string,
  caller: string | null,
  now = new Date(),
): Promise<typeof CALLER_RATE_LIMITED | 'quota_exceeded' | 'concurrency' | null> {
  const limits = await effectiveLimits(tx, accountId, database)
  await lockCallLines(tx, accountId)
  if (
    caller &&
    (await callerCallsLastHour(tx, accountId, caller, now)) >= DEFAULT_CALL_LIMITS.inbound_calls_per_caller_per_hour
  )
    return CALLER_RATE_LIMITED
  if ((await linesInUse(tx, accountId, now)) >= limits.maxConcurrentCalls) return 'concurrency'
  if (!(await takeDailyInboundCall(tx, accountId, limits, now))) return 'quota_exceeded'
  return null
}
