// The wallet as a ledger (issue 18; docs/decisions.md "Operator surface: customers and the wallet"). An
// account's balance is the sum of its wallet_entries; subscriptions.wallet_balance is a cache of that sum,
// rewritten in the same transaction as every entry, under the subscription row lock. Usage above the plan
// limit in a UTC month is charged to the wallet as debit entries with source `usage:YYYY-MM`: each one is
// the month's overage not yet debited, so settlement is idempotent and, under the lock, race-safe.
import { and, desc, eq, gte, inArray, sql } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { rowsOf } from '~/db/client'
import { accounts, subscriptions, usageRecords, users, walletEntries } from '~/db/schema'
import { Errors } from '~/lib/errors'
import { afterPosition, type KeysetRequest, keysetPage } from '~/lib/keyset'
import { forgetBalance, round4, usageSource } from '~/domain/conversations/billing'

export type WalletKind = 'credit' | 'debit' | 'adjustment'

const monthStart = (d: Date, back = 0) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - back, 1))

type EntryRow = typeof walletEntries.$inferSelect

export const presentEntry = (r: EntryRow) => ({
  entry_id: r.id,
  amount: Number(r.amount),
  currency_code: r.currencyCode,
  kind: r.kind as WalletKind,
  reason: r.reason,
  balance_after: Number(r.balanceAfter),
  created_at: r.createdAt.toISOString(),
})

interface Locked {
  accountId: string
  plan: string
  planLimit: number
  currencyCode: string
  balance: number
  /** The newest entry's time: a new entry is stamped strictly after it, so created_at orders the ledger. */
  lastAt: number
}

/** Locks the account's subscription row and reads the ledger sum (the truth the cached balance follows). */
async function lockWallet(tx: Executor, accountId: string): Promise<Locked | null> {
  const [sub] = await tx.select().from(subscriptions).where(eq(subscriptions.accountId, accountId)).for('update')
  if (!sub) return null
  const [facts] = rowsOf<{ plan: string; currency_code: string | null; total: string; last_ms: string | null }>(
    await tx.execute(sql`
      SELECT a.plan,
             (SELECT u.currency_code FROM users u WHERE u.account_id = a.id ORDER BY u.created_at LIMIT 1) AS currency_code,
             (SELECT coalesce(sum(amount), 0)::text FROM wallet_entries w WHERE w.account_id = a.id) AS total,
             (SELECT (extract(epoch FROM max(created_at)) * 1000)::bigint::text FROM wallet_entries w
              WHERE w.account_id = a.id) AS last_ms
      FROM accounts a WHERE a.id = ${accountId}`),
  )
  return {
    accountId,
    plan: facts?.plan ?? sub.plan,
    planLimit: Number(sub.planLimit),
    currencyCode: facts?.currency_code ?? 'USD',
    balance: Number(facts?.total ?? 0),
    lastAt: Number(facts?.last_ms ?? 0),
  }
}

async function insertEntry(
  tx: Executor,
  w: Locked,
  e: { amount: number; kind: WalletKind; reason: string; source?: string | null; requestId?: string | null },
  now: Date,
) {
  const balanceAfter = round4(w.balance + e.amount)
  const at = new Date(Math.max(now.getTime(), w.lastAt + 1))
  const [row] = await tx
    .insert(walletEntries)
    .values({
      accountId: w.accountId,
      amount: round4(e.amount),
      currencyCode: w.currencyCode,
      kind: e.kind,
      reason: e.reason,
      balanceAfter,
      source: e.source ?? null,
      requestId: e.requestId ?? null,
      createdAt: at,
    })
    .returning()
  w.balance = balanceAfter
  w.lastAt = at.getTime()
  return row
}

async function writeBalance(tx: Executor, w: Locked, now: Date) {
  await tx
    .update(subscriptions)
    .set({ walletBalance: w.balance, updatedAt: now })
    .where(eq(subscriptions.accountId, w.accountId))
}

/** Debits, under the lock, each recent month's overage not yet debited (the current and the previous UTC
 *  month: an older month was settled by the runs of its own time). A trial is free: nothing is charged. */
async function settleLocked(tx: Executor, w: Locked, now: Date) {
  if (w.plan === 'trial') return 0
  const months = rowsOf<{ month: string; spent: string }>(
    await tx.execute(sql`
      SELECT to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM') AS month, sum(cost_usd)::text AS spent
      FROM usage_records WHERE account_id = ${w.accountId} AND started_at >= ${monthStart(now, 1).toISOString()}
      GROUP BY 1 ORDER BY 1`),
  )
  const over = months
    .map((m) => ({ source: usageSource(m.month), month: m.month, overage: round4(Number(m.spent) - w.planLimit) }))
    .filter((m) => m.overage > 0)
  if (!over.length) return 0
  const debited = await tx
    .select({ source: walletEntries.source, total: sql<string>`coalesce(sum(-${walletEntries.amount}), 0)::text` })
    .from(walletEntries)
    .where(
      and(
        eq(walletEntries.accountId, w.accountId),
        inArray(
          walletEntries.source,
          over.map((m) => m.source),
        ),
      ),
    )
    .groupBy(walletEntries.source)
  const done = new Map(debited.map((d) => [d.source, Number(d.total)]))
  let n = 0
  for (const m of over) {
    const due = round4(m.overage - (done.get(m.source) ?? 0))
    if (due <= 0) continue
    await insertEntry(
      tx,
      w,
      { amount: -due, kind: 'debit', reason: `Usage above the plan limit in ${m.month}`, source: m.source },
      now,
    )
    n++
  }
  return n
}

/** Settles the account's usage debits (idempotent); the wallet_balance cache is rewritten from the ledger. */
export async function settleWallet(database: Database, accountId: string, now = new Date()) {
  const n = await database.tx(async (tx) => {
    const w = await lockWallet(tx, accountId)
    if (!w) return 0
    const count = await settleLocked(tx, w, now)
    await writeBalance(tx, w, now)
    return count
  })
  if (n) forgetBalance(accountId)
  return n
}

/** Settles every account with usage since the start of the previous UTC month (the periodic job). */
export async function settleRecentWallets(database: Database, now = new Date()) {
  const rows = await database.db
    .selectDistinct({ accountId: usageRecords.accountId })
    .from(usageRecords)
    .where(gte(usageRecords.startedAt, monthStart(now, 1)))
  let entries = 0
  for (const r of rows) entries += await settleWallet(database, r.accountId, now)
  return { accounts: rows.length, entries }
}

/** A credit (top-up, amount > 0) or an adjustment (any non-zero amount) by the operator. Usage is settled
 *  first, in the same transaction, so the entry's balance_after is the balance the customer really has. */
export async function addWalletEntry(
  database: Database,
  accountId: string,
  e: { amount: number; kind: 'credit' | 'adjustment'; reason: string; requestId: string | null },
  now = new Date(),
) {
  const row = await database.tx(async (tx) => {
    const w = await lockWallet(tx, accountId)
    if (!w) throw Errors.notFound('Customer')
    await settleLocked(tx, w, now)
    const entry = await insertEntry(tx, w, e, now)
    await writeBalance(tx, w, now)
    return entry
  })
  // Positive balance answers are cached per process: this process forgets at once (a block ends at the
  // next request anyway, since a block is never cached).
  forgetBalance(accountId)
  return presentEntry(row)
}

/** The account's ledger, newest first (keyset on created_at, id). */
export async function listWalletEntries(database: Database, accountId: string, page: KeysetRequest) {
  const conds = [eq(walletEntries.accountId, accountId)]
  const after = afterPosition(page, walletEntries.createdAt, walletEntries.id)
  if (after) conds.push(after)
  const rows = await database.db
    .select()
    .from(walletEntries)
    .where(and(...conds))
    .orderBy(desc(walletEntries.createdAt), desc(walletEntries.id))
    .limit(page.binding.limit + 1)
  return keysetPage(page, rows, (r) => [r.createdAt.toISOString(), r.id], presentEntry)
}

/** The newest `n` entries of the account. */
export async function recentEntries(database: Database, accountId: string, n = 5) {
  const rows = await database.db
    .select()
    .from(walletEntries)
    .where(eq(walletEntries.accountId, accountId))
    .orderBy(desc(walletEntries.createdAt), desc(walletEntries.id))
    .limit(n)
  return rows.map(presentEntry)
}

/** The account of a user id, or 404 (the operator names customers by their user). */
export async function customerAccount(database: Database, userId: string) {
  const [row] = await database.db
    .select({ accountId: users.accountId, currencyCode: users.currencyCode })
    .from(users)
    .innerJoin(accounts, eq(accounts.id, users.accountId))
    .where(eq(users.id, userId))
  if (!row) throw Errors.notFound('Customer')
  return row
}
