// Audit rows are buffered and written in batches after the response has gone out, so auditing never adds
// a database round trip to a request. A flush runs 250 ms after the first row of a batch (no timer while nothing
// is buffered: an idle process is not woken; decisions "Issue 36: idle wake-ups") or at 200 rows, and at shutdown.
import type { Database } from '~/db/client'
import type { auditLog } from '~/db/schema'

export type AuditRow = typeof auditLog.$inferInsert

// One statement of fixed text for any batch size: Drizzle's multi-row insert built a query of 13 parameters
// per row on every flush (a tenth of a list request's CPU under load) and, prepared, one statement per batch size.
const INSERT_AUDIT = `
  INSERT INTO audit_log (request_id, credential_type, credential_id, account_ids, cross_account, method, path,
    status_code, error_code, ip, user_agent, duration_ms, created_at)
  SELECT r.request_id, r.credential_type, r.credential_id, coalesce(r.account_ids, '[]'::jsonb),
    coalesce(r.cross_account, false), r.method, r.path, r.status_code, r.error_code, r.ip, r.user_agent,
    r.duration_ms, coalesce(r.created_at, now())
  FROM jsonb_to_recordset($1::jsonb) AS r(request_id text, credential_type text, credential_id text,
    account_ids jsonb, cross_account boolean, method text, path text, status_code int, error_code text,
    ip text, user_agent text, duration_ms int, created_at timestamptz)`

// jsonb cannot hold U+0000, and one bad row would lose its whole batch.
const noNul = (s: string) => (s.includes('\u0000') ? s.replaceAll('\u0000', '') : s)
const toRecord = (r: AuditRow) => ({
  request_id: r.requestId,
  credential_type: r.credentialType ?? null,
  credential_id: r.credentialId ?? null,
  account_ids: r.accountIds ?? null,
  cross_account: r.crossAccount ?? null,
  method: r.method,
  path: noNul(r.path),
  status_code: r.statusCode,
  error_code: r.errorCode ?? null,
  ip: r.ip ?? null,
  user_agent: r.userAgent == null ? null : noNul(r.userAgent),
  duration_ms: r.durationMs,
  created_at: r.createdAt instanceof Date ? r.createdAt.toISOString() : (r.createdAt ?? null),
})

export interface AuditWriter {
  record(row: AuditRow): void
  flush(): Promise<void>
  stop(): Promise<void>
}

export function createAuditWriter(
  database: Database,
  opts: { intervalMs?: number; maxBatch?: number; log?: (m: string) => void } = {},
): AuditWriter {
  const intervalMs = opts.intervalMs ?? 250
  const maxBatch = opts.maxBatch ?? 200
  let buffer: AuditRow[] = []
  let flushing: Promise<void> = Promise.resolve()

  const flush = () => {
    flushing = flushing.then(async () => {
      while (buffer.length) {
        const batch = buffer.slice(0, 1000)
        buffer = buffer.slice(batch.length)
        try {
          await database.executeSql(INSERT_AUDIT, [JSON.stringify(batch.map(toRecord))])
        } catch (err) {
          // Losing audit rows silently would be worse than logging them: keep them in the log.
          ;(opts.log ?? console.error)(`[audit] failed to write ${batch.length} rows: ${(err as Error).message}`)
        }
      }
    })
    return flushing
  }
  // Armed by the first row after a flush, so the rows of a burst still share one statement.
  let timer: NodeJS.Timeout | undefined
  const arm = () => {
    if (timer) return
    timer = setTimeout(() => {
      timer = undefined
      if (buffer.length) void flush()
    }, intervalMs)
    timer.unref()
  }

  return {
    record(row) {
      buffer.push(row)
      if (buffer.length >= maxBatch) void flush()
      else arm()
    },
    flush,
    async stop() {
      clearTimeout(timer)
      timer = undefined
      await flush()
    },
  }
}
