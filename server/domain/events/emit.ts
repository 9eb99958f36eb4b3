// The events outbox writer: one row per event, written through the caller's transaction so the event
// exists exactly when the change that caused it commits. Payload per decisions "Events":
// {id: "evt_…", type, created_at, api_version: "v1", account_id, data}. A delivery job (issue 7) fans
// the undispatched rows out to webhook endpoints.
import { ulid } from 'ulid'
import type { Executor } from '~/db/client'
import { events } from '~/db/schema'

export type EventType =
  | 'conversation.started'
  | 'conversation.ended'
  | 'conversation.escalated'
  | 'conversation.deleted'
  | 'summary.ready'
  | 'test_run.completed'
  | 'conversation.analyzed'
  | 'kb.synced'
  | (string & {})

export interface EventPayload {
  id: string
  type: string
  created_at: string
  api_version: 'v1'
  account_id: string
  data: Record<string, unknown>
}

/** Writes one event into the outbox through `tx` and answers its payload. */
export async function emitEvent(
  tx: Executor,
  e: { accountId: string; type: EventType; data: Record<string, unknown>; at?: Date },
): Promise<EventPayload> {
  const at = e.at ?? new Date()
  const payload: EventPayload = {
    id: `evt_${ulid(at.getTime())}`,
    type: e.type,
    created_at: at.toISOString(),
    api_version: 'v1',
    account_id: e.accountId,
    data: e.data,
  }
  await tx.insert(events).values({
    id: payload.id,
    accountId: e.accountId,
    type: e.type,
    payload: payload as unknown as Record<string, unknown>,
    createdAt: at,
  })
  return payload
}
