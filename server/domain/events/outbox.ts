// Writes one event to the events outbox in the caller's transaction (payload per decisions "Events").
// The webhook delivery job (issue 7) fans the undispatched rows out to endpoints.
import { ulid } from 'ulid'
import type { Executor } from '../../db/client'
import { events } from '../../db/schema'

export async function recordEvent(tx: Executor, e: { accountId: string; type: string; data: Record<string, unknown> }) {
  const id = `evt_${ulid()}`
  const createdAt = new Date()
  const payload = { id, type: e.type, created_at: createdAt.toISOString(), api_version: 'v1', account_id: e.accountId, data: e.data }
  await tx.insert(events).values({ id, accountId: e.accountId, type: e.type, payload, createdAt })
  return payload
}
