// Contact lists of an agent (lst_<n>) and their items: create, list, import, list items. Every query is
// scoped by account: another account's agent is 404 agent_not_found, its list 404 not_found. An import
// runs in one transaction holding the list row, so concurrent imports into one list queue up and a
// server error leaves the list as it was. Whether an item's number is on the do-not-call list is read
// from dnc_entries when items are listed, so it stays current after later adds and deletes.
import { and, count, desc, eq } from 'drizzle-orm'
import type { Executor } from '~/db/client'
import { contactListItems, contactLists, dncEntries } from '~/db/schema'
import { loadAgent } from '~/domain/agents/rows'
import type { Runtime } from '~/kit/runtime'
import { apiError, Errors } from '~/lib/errors'
import { afterPosition, keysetPage, type KeysetRequest } from '~/lib/keyset'
import { readCsv, readJson, tooManyRows, yieldToLoop, type ContactRow, type ReadRows } from './rows'
import { MAX_IMPORT_ROWS, MAX_LIST_ITEMS, type CreateListBody } from './schemas'

export type ContactListRow = typeof contactLists.$inferSelect

const INSERT_BATCH = 1000

export function presentList(r: ContactListRow) {
  return {
    list_id: r.id,
    agent_id: r.agentId,
    name: r.name,
    default_region: r.defaultRegion,
    item_count: r.itemCount,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  }
}

/** The one account a list request acts for (data routes always resolve one). */
export function listAccount(account: { id: string | null }): string {
  if (!account.id) throw Errors.notFound('Account')
  return account.id
}

export async function loadList(ex: Executor, accountId: string, id: string, lock = false): Promise<ContactListRow> {
  const q = ex
    .select()
    .from(contactLists)
    .where(and(eq(contactLists.id, id), eq(contactLists.accountId, accountId)))
  const [row] = lock ? await q.for('update') : await q
  if (!row) throw Errors.notFound('Contact list')
  return row
}

export async function createList(runtime: Runtime, accountId: string, agentId: string, body: CreateListBody) {
  const db = runtime.database.db
  await loadAgent(db, accountId, agentId)
  const [row] = await db
    .insert(contactLists)
    .values({ accountId, agentId, name: body.name, defaultRegion: body.default_region ?? null })
    .returning()
  return presentList(row)
}

/** Newest first; `req` is bound to filters { account_id, agent_id } and sort -created_at,-id. */
export async function listLists(runtime: Runtime, accountId: string, agentId: string, req: KeysetRequest) {
  const db = runtime.database.db
  await loadAgent(db, accountId, agentId)
  const rows = await db
    .select()
    .from(contactLists)
    .where(
      and(
        eq(contactLists.accountId, accountId),
        eq(contactLists.agentId, agentId),
        afterPosition(req, contactLists.createdAt, contactLists.id),
      ),
    )
    .orderBy(desc(contactLists.createdAt), desc(contactLists.id))
    .limit(req.binding.limit + 1)
  return keysetPage(req, rows, (r) => [r.createdAt.toISOString(), r.id], presentList)
}

/** 403 plan_limit_reached: the list holds, or the import would take it past, `max` items. */
const listFull = (max: number) =>
  apiError('plan_limit_reached', `A contact list holds at most ${max} items; start another list.`)

export type ImportSource = { kind: 'csv'; data: Uint8Array } | { kind: 'json'; contacts: unknown[] }

/**
 * Adds the valid rows of `source` to the list in one transaction: numbers repeated in the import or
 * already on the list count as duplicates (the first occurrence wins), invalid rows are reported with
 * their line and reason. Numbers on the do-not-call list are kept (their items read dnc: true).
 */
export async function importContacts(runtime: Runtime, accountId: string, listId: string, source: ImportSource) {
  const maxItems = runtime.config.contactListMaxItems || MAX_LIST_ITEMS
  const current = await loadList(runtime.database.db, accountId, listId)
  // A full list is refused before the file is read; one the import would overfill, after its inserts
  // (the transaction then rolls back).
  if (current.itemCount >= maxItems) throw listFull(maxItems)
  if (source.kind === 'json' && source.contacts.length > MAX_IMPORT_ROWS) throw tooManyRows()
  const read: ReadRows =
    source.kind === 'csv'
      ? await readCsv(source.data, current.defaultRegion)
      : readJson(source.contacts, current.defaultRegion)
  const unique = new Map<string, ContactRow>()
  for (const r of read.rows) if (!unique.has(r.phone)) unique.set(r.phone, r)
  const fresh = [...unique.values()]
  return runtime.database.tx(async (tx) => {
    await loadList(tx, accountId, listId, true)
    let imported = 0
    for (let i = 0; i < fresh.length; i += INSERT_BATCH) {
      if (i) await yieldToLoop()
      const batch = fresh.slice(i, i + INSERT_BATCH)
      const added = await tx
        .insert(contactListItems)
        .values(
          batch.map((r) => ({
            listId,
            phoneE164: r.phone,
            name: r.name,
            timezone: r.timezone,
            variables: r.variables,
          })),
        )
        .onConflictDoNothing()
        .returning({ id: contactListItems.id })
      imported += added.length
    }
    const [{ n }] = await tx.select({ n: count() }).from(contactListItems).where(eq(contactListItems.listId, listId))
    if (Number(n) > maxItems) throw listFull(maxItems)
    const [row] = await tx
      .update(contactLists)
      .set({ itemCount: Number(n), ...(imported ? { updatedAt: new Date() } : {}) })
      .where(eq(contactLists.id, listId))
      .returning()
    return {
      imported,
      duplicates: read.rows.length - imported,
      invalid: read.invalid,
      list: presentList(row),
    }
  })
}

/** Newest first; `req` is bound to filters { list_id } and sort -created_at,-id. */
export async function listItems(runtime: Runtime, accountId: string, listId: string, req: KeysetRequest) {
  const db = runtime.database.db
  await loadList(db, accountId, listId)
  const rows = await db
    .select({ item: contactListItems, dncId: dncEntries.id })
    .from(contactListItems)
    // At most one entry per (account, number): the unique index on dnc_entries.
    .leftJoin(
      dncEntries,
      and(eq(dncEntries.accountId, accountId), eq(dncEntries.phoneE164, contactListItems.phoneE164)),
    )
    .where(
      and(eq(contactListItems.listId, listId), afterPosition(req, contactListItems.createdAt, contactListItems.id)),
    )
    .orderBy(desc(contactListItems.createdAt), desc(contactListItems.id))
    .limit(req.binding.limit + 1)
  return keysetPage(
    req,
    rows,
    (r) => [r.item.createdAt.toISOString(), r.item.id],
    (r) => ({
      item_id: r.item.id,
      phone_e164: r.item.phoneE164,
      name: r.item.name,
      timezone: r.item.timezone,
      variables: r.item.variables,
      dnc: r.dncId !== null,
      created_at: r.item.createdAt.toISOString(),
    }),
  )
}
