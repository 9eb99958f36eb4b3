// Reading the audit log: a JSON keyset page or a streamed CSV export, both newest first on
// (created_at, id), which the audit_created_idx index serves; and the retention sweep.
import { Readable } from 'node:stream'
import { and, desc, eq, gte, lt, sql, type SQL } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { rowsOf } from '~/db/client'
import { auditLog } from '~/db/schema'
import { Errors } from '~/lib/errors'
import type { Page } from '~/lib/keyset'
import { keysetPage, type KeysetRequest } from '~/lib/keyset'
import type { AuditQuery, AuditRow } from './schemas'
import { parseWindow, type Window } from '~/lib/window'

export const DEFAULT_WINDOW_MS = 24 * 3600_000
export const CSV_MAX_ROWS = 50_000
const CSV_BATCH = 1000
export const RETENTION_MONTHS = 12

export const CSV_COLUMNS = [
  'created_at',
  'request_id',
  'credential_type',
  'credential_id',
  'account_ids',
  'cross_account',
  'method',
  'path',
  'status_code',
  'error_code',
  'ip',
  'user_agent',
  'duration_ms',
] as const

export interface AuditFilters {
  /** Inclusive. */
  from: Date
  /** Exclusive. */
  to: Date
  credentialId?: string
  accountId?: string
  statusCode?: number
}

type Row = typeof auditLog.$inferSelect

/** The [from, to) window: to defaults to now, from to 24 hours before to; from must precede to. `defaulted`:
 *  neither was given (meta.applied_default_range, as on the other dated lists). */
export function auditWindow(query: Pick<AuditQuery, 'from' | 'to'>, now = new Date()): Window {
  return parseWindow(query.from, query.to, { defaultMs: DEFAULT_WINDOW_MS, now })
}

export function filtersOf(query: AuditQuery, window: { from: Date; to: Date }): AuditFilters {
  return { ...window, credentialId: query.credential_id, accountId: query.account_id, statusCode: query.status_code }
}

function present(r: Row): AuditRow {
  return {
    request_id: r.requestId,
    credential_type: r.credentialType as AuditRow['credential_type'],
    credential_id: r.credentialId,
    account_ids: r.accountIds,
    cross_account: r.crossAccount,
    method: r.method,
    path: r.path,
    status_code: r.statusCode,
    error_code: r.errorCode,
    ip: r.ip,
    user_agent: r.userAgent,
    duration_ms: r.durationMs,
    created_at: r.createdAt.toISOString(),
  }
}

type Position = { at: Date; id: number }

async function fetchRows(database: Database, f: AuditFilters, after: Position | null, limit: number): Promise<Row[]> {
  const conds: (SQL | undefined)[] = [gte(auditLog.createdAt, f.from), lt(auditLog.createdAt, f.to)]
  if (f.credentialId) conds.push(eq(auditLog.credentialId, f.credentialId))
  if (f.statusCode !== undefined) conds.push(eq(auditLog.statusCode, f.statusCode))
  if (f.accountId) conds.push(sql`${auditLog.accountIds} @> ${JSON.stringify([f.accountId])}::jsonb`)
  // A row comparison, so PostgreSQL walks the (created_at, id) index backwards from the position.
  if (after)
    conds.push(
      sql`(${auditLog.createdAt}, ${auditLog.id}) < (${after.at.toISOString()}::timestamptz, ${after.id}::bigint)`,
    )
  return database.db
    .select()
    .from(auditLog)
    .where(and(...conds))
    .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
    .limit(limit)
}

/**
 * One JSON page. The cursor position also carries the window of the first page, so a defaulted
 * (sliding) from/to stays fixed while paging and meta (from, to, applied_default_range) answers the same
 * on every page.
 */
export async function listAudit(database: Database, query: AuditQuery, page: KeysetRequest): Promise<Page<AuditRow>> {
  let window: Window
  let after: Position | null = null
  if (page.after) {
    const [at, id, from, to, defaulted] = page.after as [string, number, string, string, boolean | undefined]
    if (typeof at !== 'string' || typeof id !== 'number' || typeof from !== 'string' || typeof to !== 'string')
      throw Errors.invalidCursor()
    window = { from: new Date(from), to: new Date(to), defaulted: defaulted === true }
    after = { at: new Date(at), id }
  } else {
    window = auditWindow(query)
  }
  const rows = await fetchRows(database, filtersOf(query, window), after, page.binding.limit + 1)
  const result = await keysetPage(
    page,
    rows,
    (r) => [r.createdAt.toISOString(), r.id, window.from.toISOString(), window.to.toISOString(), window.defaulted],
    present,
  )
  return {
    ...result,
    meta: {
      from: window.from.toISOString(),
      to: window.to.toISOString(),
      applied_default_range: window.defaulted,
    },
  }
}

// A text cell a spreadsheet would read as a formula (decisions "Hostile input"): user agents and other
// client-chosen text must not run as =HYPERLINK(…) or @SUM(…) when an auditor opens the export.
const FORMULA_START = new Set(['=', '+', '-', '@', '\t', '\r'])

/**
 * RFC 4180: quote a field holding a comma, quote, CR or LF, doubling inner quotes; null is an empty field.
 * A text value starting like a formula gets a leading single quote first. Numbers and booleans are ours,
 * never client text, and stay as they are.
 */
export function csvField(value: string | number | boolean | null): string {
  if (value === null) return ''
  let s = String(value)
  if (typeof value === 'string' && FORMULA_START.has(s.charAt(0))) s = `'${s}`
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

/** account_ids are joined with a single space inside one field (ids never hold spaces). */
export function csvLine(r: AuditRow): string {
  const cells: Record<(typeof CSV_COLUMNS)[number], string | number | boolean | null> = {
    ...r,
    account_ids: r.account_ids.join(' '),
  }
  return CSV_COLUMNS.map((c) => csvField(cells[c])).join(',') + '\r\n'
}

export const CSV_HEADER = CSV_COLUMNS.join(',') + '\r\n'

export function auditCsvFilename(now = new Date(), prefix = 'svc'): string {
  return `${prefix}-audit-${now.toISOString().slice(0, 10)}.csv`
}

/**
 * The CSV export as a byte stream pulled one batch of rows at a time, so memory stays flat whatever
 * the size. The first batch is read before returning: a database failure then still becomes an error
 * response instead of a truncated file after a 200.
 */
export async function openAuditCsv(
  database: Database,
  filters: AuditFilters,
  maxRows = CSV_MAX_ROWS,
): Promise<Readable> {
  let batch = await fetchRows(database, filters, null, Math.min(CSV_BATCH, maxRows))
  async function* lines() {
    yield CSV_HEADER
    let sent = 0
    for (;;) {
      if (!batch.length) return
      sent += batch.length
      yield batch.map((r) => csvLine(present(r))).join('')
      const last = batch.at(-1)!
      if (batch.length < CSV_BATCH || sent >= maxRows) return
      batch = await fetchRows(
        database,
        filters,
        { at: last.createdAt, id: last.id },
        Math.min(CSV_BATCH, maxRows - sent),
      )
    }
  }
  // Byte mode with a small high-water mark: at most about one batch is buffered ahead of the socket.
  return Readable.from(lines(), { objectMode: false, highWaterMark: 64 * 1024 })
}

/** The cutoff of the retention sweep: 12 calendar months before now (UTC). */
export function retentionCutoff(now = new Date()): Date {
  const d = new Date(now)
  d.setUTCMonth(d.getUTCMonth() - RETENTION_MONTHS)
  return d
}

/**
 * Deletes rows older than the cutoff in batches of `batchSize`, each its own short statement, so a large
 * backlog never holds one long lock and other writers (the batched audit writer) interleave.
 */
export async function deleteExpiredAudit(database: Database, cutoff: Date, batchSize = 5000): Promise<number> {
  let total = 0
  for (;;) {
    const res = await database.db.execute(sql`
      DELETE FROM ${auditLog} WHERE ${auditLog.id} IN (
        SELECT ${auditLog.id} FROM ${auditLog} WHERE ${auditLog.createdAt} < ${cutoff.toISOString()}::timestamptz
        ORDER BY ${auditLog.createdAt}, ${auditLog.id} LIMIT ${batchSize}
      ) RETURNING 1`)
    const n = rowsOf(res).length
    total += n
    if (n < batchSize) return total
  }
}
