// Daily quotas, counted per account and UTC day (so they reset at 00:00 UTC without a job), with
// per-user overrides from PATCH /users/{usr} limits. Consuming is one atomic upsert: two instances can
// never both take the last unit.
import { and, eq, sql } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { rowsOf } from '~/db/client'
import { cachePerDatabase } from '~/db/bus'
import { quotaUsage, users } from '~/db/schema'
import { apiError } from '~/lib/errors'

export const QUOTA_KINDS = [
  'agent_creates',
  'builds',
  'kb_documents',
  'chat_messages',
  'webhook_tests',
  'reindexes',
  'test_turns',
] as const
export type QuotaKind = (typeof QUOTA_KINDS)[number]

// reindexes: one unit per POST /agents/{agt}/kb/reindex (each runs the engine over the whole knowledge base).
// test_turns: the visitor turns of an agent test run (tests' turns × repeat), taken when the run is asked for.
export const DEFAULT_QUOTAS: Record<QuotaKind, number> = {
  agent_creates: 10,
  builds: 50,
  kb_documents: 500,
  chat_messages: 5000,
  webhook_tests: 50,
  reindexes: 50,
  test_turns: 2000,
}
/** The defaults this process applies: DEFAULT_QUOTAS with the operator's SVC_QUOTAS on top (configureQuotas at boot). */
let baseQuotas: Record<QuotaKind, number> = { ...DEFAULT_QUOTAS }
/** SVC_QUOTAS as read at boot: the layer under the operator's stored defaults (PATCH /admin/config). */
let envQuotas: Record<string, number> = {}

/** Boot: operator overrides of the default daily quotas (SVC_QUOTAS, e.g. chat_messages=1000000 for a bench). An unknown kind fails the boot. */
export function configureQuotas(overrides: Record<string, number>) {
  for (const k of Object.keys(overrides)) {
    if (!(QUOTA_KINDS as readonly string[]).includes(k))
      throw new Error(`[config] SVC_QUOTAS: unknown quota "${k}"; expected ${QUOTA_KINDS.join(', ')}`)
  }
  envQuotas = { ...overrides }
  baseQuotas = { ...DEFAULT_QUOTAS, ...overrides }
}

/** The operator's stored quota defaults (platform_config, domain/admin/config.ts) over SVC_QUOTAS and the
 *  built-in figures; an empty object goes back to those. Per-user PATCH /users limits still win. */
export function applyQuotaDefaults(stored: Partial<Record<QuotaKind, number>>) {
  baseQuotas = { ...DEFAULT_QUOTAS, ...envQuotas, ...stored } as Record<QuotaKind, number>
}

/** The default daily quotas this process applies now. */
export const currentQuotaDefaults = (): Record<QuotaKind, number> => ({ ...baseQuotas })
export const DEFAULT_MAX_CONCURRENT_BUILDS = 2
export const DEFAULT_CALL_LIMITS = {
  max_concurrent_calls: 5,
  max_calls_per_day: 100,
  /** Inbound calls have their own daily quota, so callers cannot use up an account's outbound calling. */
  inbound_calls_per_day: 500,
  /** One caller number opens at most this many inbound calls an hour per account. */
  inbound_calls_per_caller_per_hour: 10,
}

/** Keys of PATCH /users limits that override a quota. */
const OVERRIDES: Partial<Record<QuotaKind, string>> = {
  agent_creates: 'max_agent_creates_per_day',
  builds: 'max_builds_per_day',
}

export const utcDay = (at = new Date()) => at.toISOString().slice(0, 10)
export const nextUtcMidnight = (at = new Date()) =>
  new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1))

export interface EffectiveLimits {
  quotas: Record<QuotaKind, number>
  maxConcurrentBuilds: number
  maxCallsPerDay: number
  maxConcurrentCalls: number
  inboundCallsPerDay: number
}

/** Refunds `n` units taken by consumeQuota for work that then did not happen (a turn that was not written). */
export async function refundQuota(db: Executor, accountId: string, kind: QuotaKind, n = 1, now = new Date()) {
  await db.execute(sql`UPDATE quota_usage SET used = greatest(used - ${n}, 0)
    WHERE account_id = ${accountId} AND day = ${utcDay(now)} AND kind = ${kind}`)
}

// The per-user overrides are read on every metered quota check: cached per account, dropped through the
// invalidation bus when the user or account row changes (a users-row trigger sends acc:<account>).
const limitsCache = cachePerDatabase<Record<string, number>>({ ttlMs: 30_000, max: 10_000 })

/** The user's limit overrides; from the cache when `database` is given and the read is outside a transaction. */
async function limitOverrides(db: Executor, accountId: string, database?: Database): Promise<Record<string, number>> {
  const read = async () => {
    const [user] = await db.select({ limits: users.limits }).from(users).where(eq(users.accountId, accountId)).limit(1)
    return (user?.limits ?? {}) as Record<string, number>
  }
  if (!database) return read()
  return (await limitsCache(database).read(accountId, read, () => [`acc:${accountId}`])) ?? {}
}

export async function effectiveLimits(db: Executor, accountId: string, database?: Database): Promise<EffectiveLimits> {
  const o = await limitOverrides(db, accountId, database)
  const quotas = { ...baseQuotas }
  for (const kind of QUOTA_KINDS) {
    const key = OVERRIDES[kind]
    if (key && typeof o[key] === 'number') quotas[kind] = o[key]
  }
  return {
    quotas,
    maxConcurrentBuilds:
      typeof o.max_concurrent_builds === 'number' ? o.max_concurrent_builds : DEFAULT_MAX_CONCURRENT_BUILDS,
    maxCallsPerDay:
      typeof o.max_calls_per_day === 'number' ? o.max_calls_per_day : DEFAULT_CALL_LIMITS.max_calls_per_day,
    maxConcurrentCalls: DEFAULT_CALL_LIMITS.max_concurrent_calls,
    inboundCallsPerDay:
      typeof o.inbound_calls_per_day === 'number' ? o.inbound_calls_per_day : DEFAULT_CALL_LIMITS.inbound_calls_per_day,
  }
}

/** Takes `n` units of today's quota or answers 429 quota_exceeded with Retry-After until 00:00 UTC. */
export async function consumeQuota(
  db: Executor,
  accountId: string,
  kind: QuotaKind,
  n = 1,
  now = new Date(),
  database?: Database,
): Promise<number> {
  const { quotas } = await effectiveLimits(db, accountId, database)
  const limit = quotas[kind]
  const day = utcDay(now)
  // Typed: two bare parameters compare as text, and '6' <= '2000' is false (n was always 1 before test runs).
  const rows = rowsOf<{ used: number }>(
    await db.execute(sql`
    INSERT INTO quota_usage (account_id, day, kind, used) SELECT ${accountId}, ${day}, ${kind}, ${n}::int
      WHERE ${n}::int <= ${limit}::int
    ON CONFLICT (account_id, day, kind) DO UPDATE SET used = quota_usage.used + ${n}::int
    WHERE quota_usage.used + ${n}::int <= ${limit}::int
    RETURNING used`),
  )
  if (!rows.length) throw quotaExceeded(kind, limit, now)
  return Number(rows[0].used)
}

/** 429 quota_exceeded with Retry-After until 00:00 UTC (consumeQuota, and the chat turn's claim, which takes its unit itself). */
export function quotaExceeded(kind: QuotaKind, limit: number, now = new Date()) {
  const resetsAt = nextUtcMidnight(now)
  return apiError(
    'quota_exceeded',
    `The daily ${kind} quota (${limit}) is used up; it resets at ${resetsAt.toISOString()}.`,
    null,
    { 'Retry-After': String(Math.max(1, Math.ceil((resetsAt.getTime() - now.getTime()) / 1000))) },
  )
}

export async function quotaUsed(db: Executor, accountId: string, now = new Date()): Promise<Record<QuotaKind, number>> {
  const rows = await db
    .select()
    .from(quotaUsage)
    .where(and(eq(quotaUsage.accountId, accountId), eq(quotaUsage.day, utcDay(now))))
  const used = Object.fromEntries(QUOTA_KINDS.map((k) => [k, 0])) as Record<QuotaKind, number>
  for (const r of rows) if ((QUOTA_KINDS as readonly string[]).includes(r.kind)) used[r.kind as QuotaKind] = r.used
  return used
}
