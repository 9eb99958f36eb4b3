// Reading and replaying deliveries. Keyset on (created_at, id), newest first, with the signed cursor
// bound to the filters and the credential.
import { and, desc, eq, gte, type SQL } from 'drizzle-orm'
import { ulid } from 'ulid'
import { webhookDeliveries } from '~/db/schema'
import { Errors } from '~/lib/errors'
import { afterPosition, keysetPage, type KeysetRequest } from '~/lib/keyset'
import type { Runtime } from '~/kit/runtime'
import { loadEndpoint } from './endpoints'
import type { DeliveryListQuery } from './schemas'
import { currentPump } from './pump'

type Row = typeof webhookDeliveries.$inferSelect

const iso = (d: Date | null) => (d ? d.toISOString() : null)

export function presentDelivery(r: Row) {
  return {
    delivery_id: r.id,
    endpoint_id: r.endpointId,
    event_id: r.eventId,
    event_type: r.eventType,
    status: r.status as 'pending' | 'retrying' | 'succeeded' | 'exhausted',
    attempt_count: r.attemptCount,
    attempts: r.attempts,
    next_attempt_at: iso(r.nextAttemptAt),
    last_status_code: r.lastStatusCode,
    last_error: r.lastError,
    replayed_from: r.replayedFrom,
    delivered_at: iso(r.deliveredAt),
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  }
}

/** Newest first; `req` is bound to the query's filters plus account_id and sort -created_at,-id. */
export async function listDeliveries(
  runtime: Runtime,
  accountId: string,
  filters: Omit<DeliveryListQuery, 'limit' | 'cursor'>,
  req: KeysetRequest,
) {
  const where: (SQL | undefined)[] = [
    eq(webhookDeliveries.accountId, accountId),
    afterPosition(req, webhookDeliveries.createdAt, webhookDeliveries.id),
  ]
  if (filters.endpoint_id) where.push(eq(webhookDeliveries.endpointId, filters.endpoint_id))
  if (filters.event) where.push(eq(webhookDeliveries.eventType, filters.event))
  if (filters.event_id) where.push(eq(webhookDeliveries.eventId, filters.event_id))
  if (filters.status) where.push(eq(webhookDeliveries.status, filters.status))
  if (filters.since) where.push(gte(webhookDeliveries.createdAt, new Date(filters.since)))
  const rows = await runtime.database.db
    .select()
    .from(webhookDeliveries)
    .where(and(...where))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(req.binding.limit + 1)
  return keysetPage(req, rows, (r) => [r.createdAt.toISOString(), r.id], presentDelivery)
}

async function loadDelivery(runtime: Runtime, accountId: string, id: string): Promise<Row> {
  const [row] = await runtime.database.db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.accountId, accountId)))
  if (!row) throw Errors.notFound('Delivery')
  return row
}

export async function getDelivery(runtime: Runtime, accountId: string, id: string) {
  const row = await loadDelivery(runtime, accountId, id)
  return { ...presentDelivery(row), payload: JSON.parse(row.body) as Record<string, unknown> }
}

/**
 * A new delivery of the same event id and body to the same endpoint, `replayed_from` the original,
 * due now. The endpoint must still exist (404 otherwise); a disabled endpoint keeps it pending until
 * it is enabled again.
 */
export async function replayDelivery(runtime: Runtime, accountId: string, id: string) {
  const original = await loadDelivery(runtime, accountId, id)
  const row = await runtime.database.tx(async (tx) => {
    await loadEndpoint(tx, accountId, original.endpointId)
    const now = new Date()
    const [created] = await tx
      .insert(webhookDeliveries)
      .values({
        id: `dlv_${ulid()}`,
        accountId,
        endpointId: original.endpointId,
        eventId: original.eventId,
        eventType: original.eventType,
        body: original.body,
        status: 'pending',
        nextAttemptAt: now,
        replayedFrom: original.id,
        createdAt: now,
        updatedAt: now,
      })
      .returning()
    return created
  })
  currentPump()?.kick()
  return presentDelivery(row)
}
