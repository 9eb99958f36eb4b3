// Billing for chat via API: the balance check on create and on every turn, and the per-session usage row.
import { and, eq, gte, sql } from 'drizzle-orm'
import type { Executor } from '~/db/client'
import { accounts, subscriptions, usageRecords } from '~/db/schema'
import { apiError } from '~/lib/errors'
import { subscriptionStatus } from '~/domain/accounts/accounts'

/** Price of chat tokens (input and output alike), USD per 1000 tokens, before the channel multiplier. */
export const CHAT_PRICE_PER_1K_TOKENS = 0.002
/** Session multipliers by channel; API chat is billed like widget chat. */
export const CHANNEL_MULTIPLIER: Record<string, number> = { api: 1, widget: 1 }
/** A positive balance check is cached per account for this long (contract: up to 10 minutes). */
export const BALANCE_CACHE_MS = 10 * 60_000

const paymentRequired = (message: string) => apiError('payment_required', message)

// Process-local: only positive answers are cached, so a block is never remembered and a top-up that
// unblocks is seen on the next request; a suspension may take up to the cache time to bite.
const okUntil = new Map<string, number>()

/** Clears the cache for an account (or all): used when this process itself changes the subscription. */
export function forgetBalance(accountId?: string) {
  if (accountId) okUntil.delete(accountId)
  else okUntil.clear()
}

export interface BalanceFacts {
  status: string
  plan: string
  walletBalance: number
  planLimit: number
  monthlySpending: number
}

/** Why billing blocks, or null. A trial (plan_limit 0) is free until it expires; other plans are blocked once
 *  the wallet is empty and the month's spending has reached the plan limit. */
export function blockReason(f: BalanceFacts): string | null {
  if (f.status !== 'active') return `The subscription is ${f.status}.`
  if (f.plan !== 'trial' && f.walletBalance <= 0 && f.monthlySpending >= f.planLimit)
    return 'The wallet is exhausted and the monthly plan limit is reached.'
  return null
}

export async function balanceFacts(ex: Executor, accountId: string, now = new Date()): Promise<BalanceFacts | null> {
  const [row] = await ex
    .select()
    .from(accounts)
    .innerJoin(subscriptions, eq(subscriptions.accountId, accounts.id))
    .where(eq(accounts.id, accountId))
  if (!row) return null
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
  // One statement: the month's spending and what of its overage the wallet ledger already debited
  // (source usage:YYYY-MM, docs/decisions.md "Operator surface: customers and the wallet").
  const [spent] = await ex
    .select({
      total: sql<string>`coalesce(sum(${usageRecords.costUsd}), 0)`,
      debited: sql<string>`(SELECT coalesce(sum(-w.amount), 0) FROM wallet_entries w WHERE w.account_id = ${accountId} AND w.source = ${usageSource(now.toISOString().slice(0, 7))})`,
    })
    .from(usageRecords)
    .where(and(eq(usageRecords.accountId, accountId), gte(usageRecords.startedAt, monthStart)))
  const planLimit = Number(row.subscriptions.planLimit)
  const monthlySpending = Number(spent?.total ?? 0)
  return {
    status: subscriptionStatus(row.subscriptions, row.accounts, now),
    plan: row.accounts.plan,
    walletBalance: effectiveWallet(
      row.accounts.plan,
      Number(row.subscriptions.walletBalance),
      monthlySpending,
      planLimit,
      Number(spent?.debited ?? 0),
    ),
    planLimit,
    monthlySpending,
  }
}

/** The wallet as settlement will leave it: the cached ledger sum less this month's overage that is not yet a
 *  debit entry. The 402 decision reads this, so it agrees with the ledger before and after a settlement run. */
/** Wallet amounts are kept to 4 decimals (numeric(12,4)). */
export const round4 = (x: number) => Math.round(x * 10_000) / 10_000

/** The wallet ledger's source of the usage debits of a UTC month ('YYYY-MM'). */
export const usageSource = (month: string) => `usage:${month}`

export function effectiveWallet(plan: string, wallet: number, spending: number, planLimit: number, debited: number) {
  if (plan === 'trial') return wallet
  const overage = round4(spending - planLimit)
  const pending = Math.max(0, round4(overage - debited))
  return wallet - pending
}

/** 402 payment_required unless the account may be billed; a positive answer is cached up to 10 minutes. */
export async function checkBalance(ex: Executor, accountId: string, now = Date.now()): Promise<void> {
  const until = okUntil.get(accountId)
  if (until !== undefined && until > now) return
  const facts = await balanceFacts(ex, accountId, new Date(now))
  const reason = facts ? blockReason(facts) : 'No subscription.'
  if (reason) {
    okUntil.delete(accountId)
    throw paymentRequired(`${reason} Top up or reactivate the subscription to continue.`)
  }
  okUntil.set(accountId, now + BALANCE_CACHE_MS)
}

export const chatCost = (tokens: number, channel: string) =>
  (tokens / 1000) * CHAT_PRICE_PER_1K_TOKENS * (CHANNEL_MULTIPLIER[channel] ?? 1)

/** Adds a turn's tokens and cost to the session's usage row (one row per (account, session)). */
export async function addUsage(
  tx: Executor,
  u: {
    accountId: string
    agentId: string | null
    agentType: string
    channel: string
    sessionId: string
    startedAt: Date
    tokens: number
    endedAt?: Date
  },
) {
  const cost = chatCost(u.tokens, u.channel)
  await tx
    .insert(usageRecords)
    .values({
      accountId: u.accountId,
      agentId: u.agentId,
      agentType: u.agentType,
      channel: u.channel,
      sessionId: u.sessionId,
      startedAt: u.startedAt,
      endedAt: u.endedAt ?? null,
      tokens: u.tokens,
      costUsd: cost,
    })
    .onConflictDoUpdate({
      target: [usageRecords.accountId, usageRecords.sessionId],
      set: { tokens: sql`${usageRecords.tokens} + ${u.tokens}`, costUsd: sql`${usageRecords.costUsd} + ${cost}` },
    })
}

/** The session a usage row belongs to (one row per (account, session)), as a conversation row names it. */
export interface UsageSession {
  accountId: string
  agentId: string | null
  agentType: string
  channel: string
  sessionId: string
  startedAt: Date
}

export const usageSessionOf = (row: UsageSession): UsageSession => ({
  accountId: row.accountId,
  agentId: row.agentId,
  agentType: row.agentType,
  channel: row.channel,
  sessionId: row.sessionId,
  startedAt: row.startedAt,
})

/** One upsert of a session's usage row: adds telephony seconds and their cost (added, not set: a call and its
 *  transfer leg each add theirs, in either order) and stamps the end when one is given. */
async function upsertSessionUsage(
  tx: Executor,
  u: UsageSession,
  endedAt: Date | null,
  voice: { seconds: number; costUsd: number } | undefined,
) {
  await tx
    .insert(usageRecords)
    .values({
      ...usageSessionOf(u),
      endedAt,
      tokens: 0,
      costUsd: voice?.costUsd ?? 0,
      telephonySeconds: voice?.seconds ?? null,
    })
    .onConflictDoUpdate({
      target: [usageRecords.accountId, usageRecords.sessionId],
      set: {
        ...(endedAt ? { endedAt } : {}),
        ...(voice
          ? {
              telephonySeconds: sql`coalesce(${usageRecords.telephonySeconds}, 0) + ${voice.seconds}`,
              costUsd: sql`${usageRecords.costUsd} + ${voice.costUsd}`,
            }
          : {}),
      },
    })
}

/** Stamps the end of the session on its usage row (created with zero tokens when no turn was billed); a
 *  call also adds its telephony seconds and their cost. */
export const closeUsage = (
  tx: Executor,
  u: UsageSession & { endedAt: Date; voice?: { seconds: number; costUsd: number } },
) => upsertSessionUsage(tx, u, u.endedAt, u.voice)

/** Adds telephony seconds and their cost to a session's usage row (a call's transfer leg), creating the row
 *  (not yet ended) when the call has not closed it yet. */
export const addVoiceUsage = (tx: Executor, u: UsageSession & { seconds: number; costUsd: number }) =>
  upsertSessionUsage(tx, u, null, { seconds: u.seconds, costUsd: u.costUsd })
