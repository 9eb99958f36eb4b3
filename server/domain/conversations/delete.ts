// Soft delete (decisions "Soft delete"): nothing is erased; the row gets deleted_at and delete_reason,
// conversation.deleted fires in the same transaction, and GET /conversations/deleted lists the tombstone.
import { and, desc, eq, inArray, isNotNull, sql, type SQL } from 'drizzle-orm'
import type { Database, Tx } from '~/db/client'
import { conversations } from '~/db/schema'
import type { Page } from '~/lib/keyset'
import { Errors } from '~/lib/errors'
import { keysetPage, type KeysetRequest } from '~/lib/keyset'
import { emitEvent } from '~/domain/events/emit'
import { presentTombstone } from './present'
import { loadConversation } from './read'
import type { DeletedQuery } from './schemas'

export type DeleteReason = 'api' | 'retention'

/** Marks one locked, live row deleted and emits conversation.deleted (data: the tombstone). */
export async function softDeleteRow(
  tx: Tx,
  row: { id: string; accountId: string },
  reason: DeleteReason,
  at = new Date(),
) {
  await tx.update(conversations).set({ deletedAt: at, deleteReason: reason }).where(eq(conversations.id, row.id))
  const tombstone = presentTombstone({ id: row.id, accountId: row.accountId, deletedAt: at, deleteReason: reason })
  await emitEvent(tx, { accountId: row.accountId, type: 'conversation.deleted', data: tombstone, at })
  return tombstone
}

/** DELETE /conversations/{conv}: 404 for unknown or another account's; deleting again is 410 conversation_deleted. */
export async function deleteConversation(database: Database, accountIds: readonly string[], id: string) {
  return database.tx(async (tx) => {
    const row = await loadConversation(tx, accountIds, id, true)
    return softDeleteRow(tx, row, 'api')
  })
}

type Tomb = ReturnType<typeof presentTombstone>

/** GET /conversations/deleted: tombstones newest first on (deleted_at, id), optionally since a time. */
export async function listDeleted(
  database: Database,
  accountIds: string[],
  q: DeletedQuery,
  page: KeysetRequest,
): Promise<Page<Tomb>> {
  const c = conversations
  const conds: (SQL | undefined)[] = [
    accountIds.length === 1 ? eq(c.accountId, accountIds[0]) : inArray(c.accountId, accountIds),
    isNotNull(c.deletedAt),
  ]
  if (q.since) conds.push(sql`${c.deletedAt} >= ${new Date(q.since).toISOString()}::timestamptz`)
  if (page.after) {
    const [at, lastId] = page.after as [string, string]
    if (typeof at !== 'string' || typeof lastId !== 'string' || Number.isNaN(Date.parse(at)))
      throw Errors.invalidCursor()
    conds.push(sql`(${c.deletedAt}, ${c.id}) < (${at}::timestamptz, ${lastId})`)
  }
  const rows = await database.db
    .select({ id: c.id, accountId: c.accountId, deletedAt: c.deletedAt, deleteReason: c.deleteReason })
    .from(c)
    .where(and(...conds))
    .orderBy(desc(c.deletedAt), desc(c.id))
    .limit(page.binding.limit + 1)
  return keysetPage(page, rows, (r) => [r.deletedAt!.toISOString(), r.id], presentTombstone)
}
