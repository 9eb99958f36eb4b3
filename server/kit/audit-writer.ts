// Audit rows are buffered and written in batches after the response has gone out, so auditing never adds
// a database round trip to a request. A flush runs every 250 ms or at 200 rows, and at shutdown.
import type { Database } from '~/db/client'
import { auditLog } from '~/db/schema'

export type AuditRow = typeof auditLog.$inferInsert

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
          await database.db.insert(auditLog).values(batch)
        } catch (err) {
          // Losing audit rows silently would be worse than logging them: keep them in the log.
          ;(opts.log ?? console.error)(`[audit] failed to write ${batch.length} rows: ${(err as Error).message}`)
        }
      }
    })
    return flushing
  }
  const timer = setInterval(() => {
    if (buffer.length) void flush()
  }, intervalMs)
  timer.unref()

  return {
    record(row) {
      buffer.push(row)
      if (buffer.length >= maxBatch) void flush()
    },
    flush,
    async stop() {
      clearInterval(timer)
      await flush()
    },
  }
}
