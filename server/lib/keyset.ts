// Keyset pagination: fetch limit + 1 rows past the decoded position; the extra row says has_more, and the
// last returned row's sort key becomes the signed next_cursor.
import { and, eq, lt, or, type AnyColumn, type SQL } from 'drizzle-orm'
import { encodeCursor, type CursorBinding } from './cursor'

/** One page of a list, before the envelope. */
export interface Page<T> {
  data: T[]
  limit: number
  hasMore: boolean
  nextCursor: string | null
  meta?: Record<string, unknown>
}

export interface KeysetRequest {
  binding: CursorBinding
  secret: string
  /** Decoded position of the last row of the previous page, or null on the first page. */
  after: unknown[] | null
}

export async function keysetPage<R, T>(
  req: KeysetRequest,
  rows: R[],
  position: (row: R) => unknown[],
  present: (row: R) => T,
): Promise<Page<T>> {
  const limit = req.binding.limit
  const hasMore = rows.length > limit
  const pageRows = rows.slice(0, limit)
  const last = pageRows.at(-1)
  return {
    data: pageRows.map(present),
    limit,
    hasMore,
    nextCursor: hasMore && last !== undefined ? await encodeCursor(position(last), req.binding, req.secret) : null,
  }
}

/** Rows strictly after the decoded (created_at, id) position of a newest-first list, or no condition. */
export function afterPosition(req: KeysetRequest, createdAt: AnyColumn, id: AnyColumn): SQL | undefined {
  if (!req.after) return undefined
  const [at, lastId] = req.after as [string, string]
  const after = new Date(at)
  return or(lt(createdAt, after), and(eq(createdAt, after), lt(id, lastId)))
}

/** Key-by-key merge of a patch into a string map: a null value removes the key (external_ids, limits). */
export function mergeKeys<T>(
  current: Record<string, T>,
  changes: Record<string, T | null> | undefined,
): Record<string, T> {
  const next = { ...current }
  for (const [k, v] of Object.entries(changes ?? {})) {
    if (v === null) delete next[k]
    else next[k] = v
  }
  return next
}
