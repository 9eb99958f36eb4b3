// Accounts (tenants): read, list, patch, limits, balance and usage. A path account that is not on the
// credential answers 404, as any resource of another account does.
import { and, desc, eq, gt, gte, inArray, sql } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { rowsOf } from '~/db/client'
import { accounts, subscriptions, usageRecords, users } from '~/db/schema'
import { Errors, apiError } from '~/lib/errors'
import { afterPosition, keysetPage, mergeKeys, type KeysetRequest } from '~/lib/keyset'
import { DEFAULT_RATE_LIMITS, RATE_CLASSES } from '~/kit/rate-limit'
import type { Principal } from '~/domain/credentials/principal'
import { DEFAULT_CALL_LIMITS, effectiveLimits, nextUtcMidnight, quotaUsed, utcDay } from '~/domain/limits/quotas'
import { inboundCallsToday } from '~/domain/calls/quotas'
import type { Account, AccountPatch } from './schemas'
import { GROUP_BY } from './schemas'
import { voiceSecondsSql } from '~/domain/usage/voice'
import { parseWindow } from '~/lib/window'
import { cachePerDatabase } from '~/db/bus'

type AccountRow = typeof accounts.$inferSelect

export function presentAccount(a: AccountRow): Account {
  return {
    account_id: a.id,
    name: a.name,
    status: a.status as Account['status'],
    plan: a.plan as Account['plan'],
    plan_expires_at: a.planExpiresAt?.toISOString() ?? null,
    external_ids: a.externalIds,
    default_redaction: a.defaultRedaction,
    transcript_retention_days: a.transcriptRetentionDays,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  }
}

export function canSee(principal: Principal, accountId: string): boolean {
  return principal.type === 'master' || (principal.accountIds ?? []).includes(accountId)
}

export async function getAccount(database: Database, principal: Principal, id: string): Promise<Account> {
  if (!canSee(principal, id)) throw Errors.notFound('Account')
  const row = await accountRow(database, id)
  if (!row) throw Errors.notFound('Account')
  return presentAccount(row)
}

// The account cache: account id → row, dropped through the invalidation bus by any change of the row
// (patchAccount and patchUser publish acc:<id>; the accounts-row trigger tells every instance).
const accountCache = cachePerDatabase<AccountRow>({ ttlMs: 30_000, max: 10_000 })

/** The account row, from the cache or read now; null when there is no such account (never cached). */
export function accountRow(database: Database, id: string): Promise<AccountRow | null> {
  return accountCache(database).read(
    id,
    async () => (await database.db.select().from(accounts).where(eq(accounts.id, id)))[0] ?? null,
    () => [`acc:${id}`],
  )
}

/**
 * The account's default_redaction (decisions "Redaction"): what every read of transcript, summary or
 * identity masks by when no redact query says otherwise. From the account cache, not a query per read.
 */
export async function defaultRedaction(database: Database, id: string): Promise<boolean> {
  return (await accountRow(database, id))?.defaultRedaction ?? false
}

export async function listAccounts(
  database: Database,
  principal: Principal,
  filters: { status?: string; updated_since?: string; account_id?: string[] },
  page: KeysetRequest,
) {
  const conds = []
  if (principal.type !== 'master') conds.push(inArray(accounts.id, [...(principal.accountIds ?? [])]))
  if (filters.account_id?.length) conds.push(inArray(accounts.id, filters.account_id))
  if (filters.status) conds.push(eq(accounts.status, filters.status))
  if (filters.updated_since) conds.push(gt(accounts.updatedAt, new Date(filters.updated_since)))
  const after = afterPosition(page, accounts.createdAt, accounts.id)
  if (after) conds.push(after)
  const rows = await database.db
    .select()
    .from(accounts)
    .where(conds.length ? and(...conds) : undefined)
    .orderBy(desc(accounts.createdAt), desc(accounts.id))
    .limit(page.binding.limit + 1)
  return keysetPage(page, rows, (r) => [r.createdAt.toISOString(), r.id], presentAccount)
}

export async function patchAccount(
  database: Database,
  principal: Principal,
  id: string,
  patch: AccountPatch,
): Promise<Account> {
  if (!canSee(principal, id)) throw Errors.notFound('Account')
  const patched = await database.tx(async (tx) => {
    const [row] = await tx.select().from(accounts).where(eq(accounts.id, id)).for('update')
    if (!row) throw Errors.notFound('Account')
    const [updated] = await tx
      .update(accounts)
      .set({
        externalIds: mergeKeys(row.externalIds, patch.external_ids),
        defaultRedaction: patch.default_redaction ?? row.defaultRedaction,
        transcriptRetentionDays:
          patch.transcript_retention_days === undefined ? row.transcriptRetentionDays : patch.transcript_retention_days,
        updatedAt: new Date(),
      })
      .where(eq(accounts.id, id))
      .returning()
    return presentAccount(updated)
  })
  await database.bus.publish([`acc:${id}`])
  return patched
}

export async function accountLimits(
  database: Database,
  principal: Principal,
  id: string,
  rateLimits: Record<string, number>,
) {
  await getAccount(database, principal, id)
  const now = new Date()
  const limits = await effectiveLimits(database.db, id)
  const used = await quotaUsed(database.db, id, now)
  const dayStart = new Date(`${utcDay(now)}T00:00:00Z`)
  // Call counters come from outbound usage records (contract): created today, and not yet ended.
  const [calls] = rowsOf<{ today: number; running: number }>(
    await database.db.execute(sql`
    SELECT count(*) FILTER (WHERE started_at >= ${dayStart.toISOString()})::int AS today,
           count(*) FILTER (WHERE ended_at IS NULL)::int AS running
    FROM usage_records WHERE account_id = ${id} AND channel = 'phone_outbound'`),
  )
  const [builds] = rowsOf<{ running: number }>(
    await database.db.execute(sql`
    SELECT count(*)::int AS running FROM agent_builds WHERE account_id = ${id} AND status IN ('queued', 'running')`),
  )
  const counter = (k: keyof typeof used) => ({ limit: limits.quotas[k], used: used[k] })
  return {
    account_id: id,
    max_concurrent_calls: limits.maxConcurrentCalls,
    max_calls_per_day: limits.maxCallsPerDay,
    calls_today: Number(calls?.today ?? 0),
    calls_in_progress: Number(calls?.running ?? 0),
    inbound_calls_per_day: limits.inboundCallsPerDay,
    inbound_calls_today: await inboundCallsToday(database.db, id, now),
    inbound_calls_per_caller_per_hour: DEFAULT_CALL_LIMITS.inbound_calls_per_caller_per_hour,
    quotas: {
      day: utcDay(now),
      resets_at: nextUtcMidnight(now).toISOString(),
      agent_creates: counter('agent_creates'),
      builds: counter('builds'),
      kb_documents: counter('kb_documents'),
      chat_messages: counter('chat_messages'),
      webhook_tests: counter('webhook_tests'),
      reindexes: counter('reindexes'),
      test_turns: counter('test_turns'),
      max_concurrent_builds: limits.maxConcurrentBuilds,
      builds_in_progress: Number(builds?.running ?? 0),
    },
    // The API's classes only (per credential): the widget and OAuth limiters are the operator's business.
    rate_limits: Object.fromEntries(RATE_CLASSES.map((c) => [c, rateLimits[c] ?? DEFAULT_RATE_LIMITS[c]])),
  }
}

/** Subscription status as billing sees it: a trial past plan_expires_at is expired. */
export function subscriptionStatus(sub: { status: string }, account: AccountRow, now = new Date()): string {
  if (sub.status !== 'active') return sub.status
  if (account.plan === 'trial' && account.planExpiresAt && account.planExpiresAt <= now) return 'expired'
  return account.status === 'suspended' ? 'suspended' : 'active'
}

export async function accountBalance(database: Database, principal: Principal, id: string) {
  if (!canSee(principal, id)) throw Errors.notFound('Account')
  const [row] = await database.db
    .select()
    .from(accounts)
    .innerJoin(subscriptions, eq(subscriptions.accountId, accounts.id))
    .innerJoin(users, eq(users.accountId, accounts.id))
    .where(eq(accounts.id, id))
  if (!row) throw Errors.notFound('Account')
  const now = new Date()
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
  const [spent] = await database.db
    .select({ total: sql<string>`coalesce(sum(${usageRecords.costUsd}), 0)` })
    .from(usageRecords)
    .where(and(eq(usageRecords.accountId, id), gte(usageRecords.startedAt, monthStart)))
  return {
    account_id: id,
    wallet_balance: Number(row.subscriptions.walletBalance),
    currency_code: row.users.currencyCode,
    monthly_spending: Number(spent?.total ?? 0),
    plan_limit: Number(row.subscriptions.planLimit),
    status: subscriptionStatus(row.subscriptions, row.accounts, now),
  }
}

export function parseGroupBy(text: string): (typeof GROUP_BY)[number][] {
  const parts = text.split(',').map((s) => s.trim())
  for (const p of parts)
    if (!(GROUP_BY as readonly string[]).includes(p))
      throw apiError('unsupported_filter', `group_by accepts ${GROUP_BY.join(', ')}.`, 'group_by')
  if (parts.length > 3) throw Errors.validation('group_by', 'group_by takes one to three dimensions.')
  if (new Set(parts).size !== parts.length)
    throw Errors.validation('group_by', 'Each group_by dimension may appear once.')
  return parts as (typeof GROUP_BY)[number][]
}

/** Billed usage in [from, to) grouped by up to three dimensions; voice seconds prefer the telephony
 *  duration, and a duration derived from timestamps is ignored above 4 hours. */
export async function accountUsage(
  database: Database,
  principal: Principal,
  id: string,
  q: { from?: string; to?: string; group_by: string },
) {
  if (!canSee(principal, id)) throw Errors.notFound('Account')
  if (!q.from) throw apiError('missing_param', 'from is required (ISO-8601 date-time).', 'from')
  if (!q.to) throw apiError('missing_param', 'to is required (ISO-8601 date-time).', 'to')
  const { from, to } = parseWindow(q.from, q.to, { defaultMs: 0 })
  const groups = parseGroupBy(q.group_by)
  const dims: Record<string, ReturnType<typeof sql>> = {
    agent: sql`agent_id`,
    agent_type: sql`agent_type`,
    channel: sql`channel`,
    date: sql`to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
    month: sql`to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM')`,
  }
  const names: Record<string, string> = {
    agent: 'agent_id',
    agent_type: 'agent_type',
    channel: 'channel',
    date: 'date',
    month: 'month',
  }
  const select = groups.map((g) => sql`${dims[g]} AS ${sql.identifier(names[g])}`)
  const voice = voiceSecondsSql()
  const rows = rowsOf<Record<string, unknown>>(
    await database.db.execute(sql`
    SELECT ${sql.join(select, sql`, `)}, count(*)::int AS conversations, coalesce(sum(${voice}), 0)::int AS voice_seconds,
           coalesce(sum(tokens), 0)::int AS tokens, coalesce(sum(cost_usd), 0)::float8 AS cost_usd
    FROM usage_records WHERE account_id = ${id} AND started_at >= ${from.toISOString()} AND started_at < ${to.toISOString()}
    GROUP BY ${sql.join(
      groups.map((_, i) => sql.raw(String(i + 1))),
      sql`, `,
    )}
    ORDER BY ${sql.join(
      groups.map((_, i) => sql.raw(String(i + 1))),
      sql`, `,
    )}`),
  )
  const data = rows.map((r) => ({
    ...r,
    conversations: Number(r.conversations),
    voice_seconds: Number(r.voice_seconds),
    tokens: Number(r.tokens),
    cost_usd: Number(r.cost_usd),
  }))
  const totals = data.reduce(
    (t, r) => ({
      conversations: t.conversations + r.conversations,
      voice_seconds: t.voice_seconds + r.voice_seconds,
      tokens: t.tokens + r.tokens,
      cost_usd: Math.round((t.cost_usd + r.cost_usd) * 1e6) / 1e6,
    }),
    { conversations: 0, voice_seconds: 0, tokens: 0, cost_usd: 0 },
  )
  const [user] = await database.db.select({ currency: users.currencyCode }).from(users).where(eq(users.accountId, id))
  return {
    report: { data, totals },
    meta: {
      from: from.toISOString(),
      to: to.toISOString(),
      group_by: groups.join(','),
      currency_code: user?.currency ?? 'USD',
    },
  }
}
