// The events outbox writer: one row per event, written through the caller's transaction so the event
// exists exactly when the change that caused it commits. Payload per decisions "Events":
// {id: "evt_…", type, created_at, api_version: "v1", account_id, data}. A delivery job (issue 7) fans
// the undispatched rows out to webhook endpoints.
import { sql } from 'drizzle-orm'
import { ulid } from 'ulid'
import type { Executor } from '~/db/client'

/** NOTIFY channel of the outbox: every instance's webhook pump LISTENs, so an event is fanned out as soon as the
 *  transaction that wrote it commits (PostgreSQL delivers a notification at commit, and not at all after a
 *  rollback), on any instance, without polling (decisions "Issue 36: idle wake-ups"). */
export const EVENTS_CHANNEL = 'svc_events'

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
  // One statement: the row and its notification (identical notifications of a transaction are sent once).
  await tx.execute(sql`WITH e AS (
      INSERT INTO events (id, account_id, type, payload, created_at)
      VALUES (${payload.id}, ${e.accountId}, ${e.type}, ${JSON.stringify(payload)}::jsonb, ${at.toISOString()}::timestamptz)
      RETURNING 1)
    SELECT pg_notify(${EVENTS_CHANNEL}, '') FROM e`)
  return payload
}
