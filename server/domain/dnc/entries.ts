// The do-not-call list of an account (dnc_<n>): add (idempotent per number), list, delete. Every query
// is scoped by account; another account's entry is 404 not_found. The unique (account_id, phone_e164)
// index keeps one entry per number, also when two adds race: the loser reads the winner's entry.
import { and, desc, eq } from 'drizzle-orm'
import { dncEntries } from '~/db/schema'
import type { Runtime } from '~/kit/runtime'
import { Errors } from '~/lib/errors'
import { afterPosition, keysetPage, type KeysetRequest } from '~/lib/keyset'
import type { CreateDncBody, DncSource } from './schemas'

export type DncRow = typeof dncEntries.$inferSelect

export function presentDnc(r: DncRow) {
  return {
    dnc_id: r.id,
    account_id: r.accountId,
    phone_e164: r.phoneE164,
    reason: r.reason,
    source: r.source as DncSource,
    created_at: r.createdAt.toISOString(),
  }
}

/** The one account a do-not-call request acts for (data routes always resolve one). */
export function dncAccount(account: { id: string | null }): string {
  if (!account.id) throw Errors.notFound('Account')
  return account.id
}

/**
 * Lists the number: `created` true with the new entry, or false with the entry already there (its reason
 * and source are kept as they are).
 */
export async function addDnc(runtime: Runtime, accountId: string, body: CreateDncBody) {
  const db = runtime.database.db
  const [row] = await db
    .insert(dncEntries)
    .values({ accountId, phoneE164: body.phone, reason: body.reason ?? null, source: 'api' })
    .onConflictDoNothing()
    .returning()
  if (row) return { created: true, entry: presentDnc(row) }
  const [existing] = await db
    .select()
    .from(dncEntries)
    .where(and(eq(dncEntries.accountId, accountId), eq(dncEntries.phoneE164, body.phone)))
  if (!existing) throw new Error('do-not-call entry vanished between insert and read')
  return { created: false, entry: presentDnc(existing) }
}

/** Newest first; `req` is bound to filters { account_id, phone } and sort -created_at,-id. */
export async function listDnc(runtime: Runtime, accountId: string, filters: { phone?: string }, req: KeysetRequest) {
  const rows = await runtime.database.db
    .select()
    .from(dncEntries)
    .where(
      and(
        eq(dncEntries.accountId, accountId),
        filters.phone === undefined ? undefined : eq(dncEntries.phoneE164, filters.phone),
        afterPosition(req, dncEntries.createdAt, dncEntries.id),
      ),
    )
    .orderBy(desc(dncEntries.createdAt), desc(dncEntries.id))
    .limit(req.binding.limit + 1)
  return keysetPage(req, rows, (r) => [r.createdAt.toISOString(), r.id], presentDnc)
}

export async function deleteDnc(runtime: Runtime, accountId: string, id: string) {
  const gone = await runtime.database.db
    .delete(dncEntries)
    .where(and(eq(dncEntries.id, id), eq(dncEntries.accountId, accountId)))
    .returning({ id: dncEntries.id })
  if (!gone.length) throw Errors.notFound('Do-not-call entry')
}
