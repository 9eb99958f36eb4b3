// The operator's view of customers (issue 18): a customer is a user and its account, named by the user id.
// Search, the per-customer overview, plan and status changes, and the platform overview. Status reuses
// patchUser (the principal cache and the invalidation bus make a suspension or a resume bite on the next
// request); the wallet lives in ./wallet.ts.
import { and, desc, eq, ilike, or, sql } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { rowsOf } from '~/db/client'
import { accounts, agents, subscriptions, users } from '~/db/schema'
import { Errors } from '~/lib/errors'
import { afterPosition, type KeysetRequest, keysetPage } from '~/lib/keyset'
import { subscriptionStatus } from '~/domain/accounts/accounts'
import { forgetBalance } from '~/domain/conversations/billing'
import { planTerms, TRIAL_DAYS } from '~/domain/limits/plans'
import { patchUser } from '~/domain/users/users'
import { recentEntries, settleWallet } from './wallet'
import { queueCounts } from './system'
import type { Runtime } from '~/kit/runtime'

type Row = {
  users: typeof users.$inferSelect
  accounts: typeof accounts.$inferSelect
  subscriptions: typeof subscriptions.$inferSelect
}

function presentCustomer(r: Row, now = new Date()) {
  return {
    user_id: r.users.id,
    account_id: r.accounts.id,
    email: r.users.email,
    name: r.users.name,
    company_name: r.users.companyName,
    plan: r.accounts.plan,
    plan_expires_at: r.accounts.planExpiresAt?.toISOString() ?? null,
    plan_limit: Number(r.subscriptions.planLimit),
    status: r.users.status,
    subscription_status: subscriptionStatus(r.subscriptions, r.accounts, now),
    wallet_balance: Number(r.subscriptions.walletBalance),
    currency_code: r.users.currencyCode,
    partner_id: r.users.partnerId,
    created_at: r.users.createdAt.toISOString(),
  }
}

const customerRows = (database: Database) =>
  database.db
    .select()
    .from(users)
    .innerJoin(accounts, eq(accounts.id, users.accountId))
    .innerJoin(subscriptions, eq(subscriptions.accountId, accounts.id))

async function customerRow(database: Database, userId: string): Promise<Row> {
  const [row] = await customerRows(database).where(eq(users.id, userId))
  if (!row) throw Errors.notFound('Customer')
  return row
}

export async function getCustomer(database: Database, userId: string) {
  return presentCustomer(await customerRow(database, userId))
}

/** `%` and `_` in the search text match themselves. */
const likeText = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

export async function searchCustomers(
  database: Database,
  filters: { q?: string; status?: string; plan?: string },
  page: KeysetRequest,
) {
  const conds = []
  if (filters.q) {
    const p = likeText(filters.q)
    conds.push(or(ilike(users.email, p), ilike(users.name, p), ilike(users.companyName, p)))
  }
  if (filters.status) conds.push(eq(users.status, filters.status))
  if (filters.plan) conds.push(eq(accounts.plan, filters.plan))
  const after = afterPosition(page, users.createdAt, users.id)
  if (after) conds.push(after)
  const rows = await customerRows(database)
    .where(conds.length ? and(...conds) : undefined)
    .orderBy(desc(users.createdAt), desc(users.id))
    .limit(page.binding.limit + 1)
  const now = new Date()
  return keysetPage(
    page,
    rows,
    (r) => [r.users.createdAt.toISOString(), r.users.id],
    (r) => presentCustomer(r, now),
  )
}

/** User, account, agents, 30-day usage, wallet (settled first) and recent errors of one customer. */
export async function customerOverview(database: Database, userId: string) {
  const first = await customerRow(database, userId)
  const accountId = first.accounts.id
  await settleWallet(database, accountId)
  const row = await customerRow(database, userId)
  const now = new Date()
  const since30 = new Date(now.getTime() - 30 * 86_400_000)
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
  const agentRows = await database.db
    .select({
      id: agents.id,
      name: agents.name,
      agentType: agents.agentType,
      pausedAt: agents.pausedAt,
      createdAt: agents.createdAt,
    })
    .from(agents)
    .where(eq(agents.accountId, accountId))
    .orderBy(desc(agents.createdAt), desc(agents.id))
    .limit(100)
  const usage = rowsOf<{ channel: string; conversations: number; tokens: number; cost_usd: number }>(
    await database.db.execute(sql`
      SELECT channel, count(*)::int AS conversations, coalesce(sum(tokens), 0)::int AS tokens,
             coalesce(sum(cost_usd), 0)::float8 AS cost_usd
      FROM usage_records WHERE account_id = ${accountId} AND started_at >= ${since30.toISOString()}
      GROUP BY channel ORDER BY channel`),
  )
  const [month] = rowsOf<{ spent: number }>(
    await database.db.execute(sql`
      SELECT coalesce(sum(cost_usd), 0)::float8 AS spent FROM usage_records
      WHERE account_id = ${accountId} AND started_at >= ${monthStart.toISOString()}`),
  )
  const errors = rowsOf<{
    request_id: string
    method: string
    path: string
    status_code: number
    error_code: string | null
    created_at: string
  }>(
    await database.db.execute(sql`
      SELECT request_id, method, path, status_code, error_code,
             to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at
      FROM audit_log
      WHERE account_ids @> ${JSON.stringify([accountId])}::jsonb AND status_code >= 400
        AND created_at >= ${new Date(now.getTime() - 7 * 86_400_000).toISOString()}
      ORDER BY created_at DESC, id DESC LIMIT 20`),
  )
  const recent = await recentEntries(database, accountId, 5)
  const customer = presentCustomer(row, now)
  return {
    user: {
      user_id: customer.user_id,
      email: customer.email,
      name: customer.name,
      company_name: customer.company_name,
      status: customer.status,
      currency_code: customer.currency_code,
      partner_id: customer.partner_id,
      created_at: customer.created_at,
    },
    account: {
      account_id: accountId,
      name: row.accounts.name,
      plan: customer.plan,
      plan_expires_at: customer.plan_expires_at,
      plan_limit: customer.plan_limit,
      status: row.accounts.status,
      subscription_status: customer.subscription_status,
      created_at: row.accounts.createdAt.toISOString(),
    },
    agents: agentRows.map((a) => ({
      agent_id: a.id,
      name: a.name,
      agent_type: a.agentType,
      paused: a.pausedAt !== null,
      created_at: a.createdAt.toISOString(),
    })),
    usage_30d: {
      from: since30.toISOString(),
      to: now.toISOString(),
      conversations: usage.reduce((n, u) => n + Number(u.conversations), 0),
      tokens: usage.reduce((n, u) => n + Number(u.tokens), 0),
      cost_usd: usage.reduce((n, u) => n + Number(u.cost_usd), 0),
      by_channel: usage.map((u) => ({
        channel: u.channel,
        conversations: Number(u.conversations),
        tokens: Number(u.tokens),
        cost_usd: Number(u.cost_usd),
      })),
    },
    wallet: {
      balance: customer.wallet_balance,
      currency_code: customer.currency_code,
      monthly_spending: Number(month?.spent ?? 0),
      recent_entries: recent,
    },
    recent_errors: errors.map((e) => ({ ...e, status_code: Number(e.status_code) })),
  }
}

/** Plan change: plan, its expiry (a trial gets TRIAL_DAYS from now unless given) and the monthly limit
 *  (the plan's price unless the operator names another). */
export async function setPlan(
  database: Database,
  userId: string,
  input: { plan: string; plan_expires_at?: string | null; plan_limit?: number },
) {
  const { accountId } = await database.tx(async (tx) => {
    const [row] = await tx.select({ accountId: users.accountId }).from(users).where(eq(users.id, userId)).for('update')
    if (!row) throw Errors.notFound('Customer')
    const now = new Date()
    const expires =
      input.plan_expires_at !== undefined
        ? input.plan_expires_at === null
          ? null
          : new Date(input.plan_expires_at)
        : input.plan === 'trial'
          ? new Date(now.getTime() + TRIAL_DAYS * 86_400_000)
          : null
    await tx
      .update(accounts)
      .set({ plan: input.plan, planExpiresAt: expires, updatedAt: now })
      .where(eq(accounts.id, row.accountId))
    await tx
      .update(subscriptions)
      .set({
        plan: input.plan,
        planLimit: input.plan_limit ?? planTerms(input.plan).price,
        updatedAt: now,
      })
      .where(eq(subscriptions.accountId, row.accountId))
    return row
  })
  await database.bus.publish([`user:${userId}`, `acc:${accountId}`])
  forgetBalance(accountId)
  return getCustomer(database, userId)
}

/** Suspend or resume: the user and its account (patchUser publishes the tags, so the account's keys are
 *  refused, or accepted again, on the very next request). */
export async function setStatus(database: Database, userId: string, status: 'active' | 'suspended') {
  const user = await patchUser(database, userId, { status })
  forgetBalance(user.account_id)
  return getCustomer(database, userId)
}

/** Counts for the operator's front page. */
export async function platformOverview(runtime: Runtime, now = new Date()) {
  const { database } = runtime
  const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()))
  const week = new Date(now.getTime() - 7 * 86_400_000)
  const dayIso = day.toISOString()
  const weekIso = week.toISOString()
  const [counts] = rowsOf<Record<string, string | number | null>>(
    await database.db.execute(sql`
      SELECT (SELECT count(*) FROM users)::int AS users,
             (SELECT count(*) FROM accounts)::int AS accounts,
             (SELECT count(*) FROM agents)::int AS agents,
             (SELECT count(*) FROM conversations WHERE channel NOT IN ('phone_inbound', 'phone_outbound')
                AND started_at >= ${dayIso})::int AS conversations_today,
             (SELECT count(*) FROM conversations WHERE channel NOT IN ('phone_inbound', 'phone_outbound')
                AND started_at >= ${weekIso})::int AS conversations_7d,
             (SELECT count(*) FROM conversations WHERE channel IN ('phone_inbound', 'phone_outbound')
                AND started_at >= ${dayIso})::int AS calls_today,
             (SELECT count(*) FROM conversations WHERE channel IN ('phone_inbound', 'phone_outbound')
                AND started_at >= ${weekIso})::int AS calls_7d,
             (SELECT coalesce(sum(wallet_balance), 0)::float8 FROM subscriptions) AS wallet_total,
             (SELECT count(*) FROM audit_log WHERE status_code >= 500
                AND created_at >= ${new Date(now.getTime() - 86_400_000).toISOString()})::int AS errors_5xx_24h`),
  )
  const byPlan = rowsOf<{ plan: string; n: number }>(
    await database.db.execute(sql`SELECT plan, count(*)::int AS n FROM accounts GROUP BY plan ORDER BY plan`),
  )
  const byStatus = rowsOf<{ status: string; n: number }>(
    await database.db.execute(sql`SELECT status, count(*)::int AS n FROM accounts GROUP BY status ORDER BY status`),
  )
  // Waiting jobs (created or retrying), as the system status counts them; null when the queue cannot be read.
  const queue = await queueCounts(runtime)
  const queueDepth = queue ? queue.created + queue.retry : null
  const n = (k: string) => Number(counts?.[k] ?? 0)
  return {
    users: n('users'),
    accounts: {
      total: n('accounts'),
      by_plan: Object.fromEntries(byPlan.map((r) => [r.plan, Number(r.n)])),
      by_status: Object.fromEntries(byStatus.map((r) => [r.status, Number(r.n)])),
    },
    agents: n('agents'),
    conversations: { today: n('conversations_today'), last_7_days: n('conversations_7d') },
    calls: { today: n('calls_today'), last_7_days: n('calls_7d') },
    wallet_total: n('wallet_total'),
    errors_5xx_24h: n('errors_5xx_24h'),
    queue_depth: queueDepth,
    generated_at: now.toISOString(),
  }
}
