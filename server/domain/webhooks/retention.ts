// How long webhook history is kept. The events outbox is transport: once fanned out, every delivery holds
// its own copy of the body (replay reads the delivery, not the event), so a dispatched event is kept 7
// days for inspection and then deleted. Deliveries in a final state (succeeded, exhausted) stay listed and
// replayable for 30 days. Pending and retrying deliveries are never touched. Deleted in bounded batches
// so a large backlog never holds one long transaction.
import { sql } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { rowsOf } from '~/db/client'

export const EVENT_RETENTION_DAYS = 7
export const DELIVERY_RETENTION_DAYS = 30
const BATCH = 5_000
const DAY_MS = 86_400_000

export async function sweepWebhookHistory(
  database: Database,
  now = new Date(),
): Promise<{ events: number; deliveries: number }> {
  const eventsBefore = new Date(now.getTime() - EVENT_RETENTION_DAYS * DAY_MS).toISOString()
  const deliveriesBefore = new Date(now.getTime() - DELIVERY_RETENTION_DAYS * DAY_MS).toISOString()
  let events = 0
  let deliveries = 0
  for (;;) {
    const gone = rowsOf(
      await database.db.execute(sql`
      DELETE FROM events WHERE id IN (
        SELECT id FROM events WHERE dispatched_at IS NOT NULL AND dispatched_at < ${eventsBefore}::timestamptz LIMIT ${BATCH})
      RETURNING id`),
    ).length
    events += gone
    if (gone < BATCH) break
  }
  for (;;) {
    const gone = rowsOf(
      await database.db.execute(sql`
      DELETE FROM webhook_deliveries WHERE id IN (
        SELECT id FROM webhook_deliveries WHERE status IN ('succeeded', 'exhausted') AND updated_at < ${deliveriesBefore}::timestamptz LIMIT ${BATCH})
      RETURNING id`),
    ).length
    deliveries += gone
    if (gone < BATCH) break
  }
  return { events, deliveries }
}
