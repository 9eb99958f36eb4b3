// The operator's action log (GET /admin/actions): one row per successful write of an /admin route, with the
// request id that made it, so every change an operator made can be traced to its audit row and logs.
import { and, desc, eq } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { adminActions } from '~/db/schema'
import { afterPosition, type KeysetRequest, keysetPage } from '~/lib/keyset'

export interface AdminActionInput {
  action: string
  target: string | null
  params: Record<string, unknown>
  requestId: string
}

export async function recordAction(ex: Executor, a: AdminActionInput) {
  await ex.insert(adminActions).values({ action: a.action, target: a.target, params: a.params, requestId: a.requestId })
}

type Row = typeof adminActions.$inferSelect

export const presentAction = (r: Row) => ({
  action_id: r.id,
  action: r.action,
  target: r.target,
  params: r.params,
  request_id: r.requestId,
  created_at: r.createdAt.toISOString(),
})

export async function listActions(
  database: Database,
  filters: { action?: string; target?: string },
  page: KeysetRequest,
) {
  const conds = []
  if (filters.action) conds.push(eq(adminActions.action, filters.action))
  if (filters.target) conds.push(eq(adminActions.target, filters.target))
  const after = afterPosition(page, adminActions.createdAt, adminActions.id)
  if (after) conds.push(after)
  const rows = await database.db
    .select()
    .from(adminActions)
    .where(conds.length ? and(...conds) : undefined)
    .orderBy(desc(adminActions.createdAt), desc(adminActions.id))
    .limit(page.binding.limit + 1)
  return keysetPage(page, rows, (r) => [r.createdAt.toISOString(), r.id], presentAction)
}
