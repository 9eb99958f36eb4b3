// Outbound call rows (call_<n>): the resource, reads, and the one way a call changes status. Every status
// change is a guarded UPDATE (from the states it may leave), so a provider webhook, the voice session, a
// cancel and the orphan sweep can all race and exactly one of them moves the call; an end state writes its
// call.* event in the same transaction.
import { and, desc, eq, inArray, sql } from 'drizzle-orm'
import type { Executor } from '~/db/client'
import { rowsOf } from '~/db/client'
import { calls } from '~/db/schema'
import { Errors } from '~/lib/errors'
import { afterPosition, keysetPage, type KeysetRequest } from '~/lib/keyset'
import { emitEvent } from '~/domain/events/emit'
import type { CallListQuery, CallResource, CallStatus, VoicemailPolicy } from './outbound-schemas'

export type CallRow = typeof calls.$inferSelect

/** What a call runs, resolved and filled when it is created. */
export interface CallScript {
  instructions: string
  greeting: string | null
  /** Always null and hang_up since hang_up became the only policy (decisions "Behaviour", row Voicemail).
   *  Older scripts may still hold leave_message and a message; scriptOf reads them as hang_up. */
  voicemail_message: null
  voicemail_policy: VoicemailPolicy
  capabilities: string[]
  max_call_duration_s: number
  /** The profile's prompt version label the instructions came from (null: inline role or unbuilt profile). */
  prompt_version: string | null
}

/** What a call runs. An answering machine ends every call at once: a script stored before hang_up became
 *  the only voicemail policy (a queued call, say) is read as hang_up with no message. */
export const scriptOf = (row: CallRow): CallScript => ({
  ...(row.script as unknown as CallScript),
  voicemail_message: null,
  voicemail_policy: 'hang_up',
})

const iso = (d: Date | null) => (d ? d.toISOString() : null)

export function presentCall(r: CallRow): CallResource {
  return {
    call_id: r.id,
    account_id: r.accountId,
    agent_id: r.agentId,
    profile_id: r.profileId,
    campaign_id: r.campaignId,
    direction: 'outbound',
    from: r.fromE164,
    to: r.toE164,
    status: r.status as CallStatus,
    outcome: r.outcome,
    conversation_id: r.conversationId,
    failure_reason: r.failureReason,
    variables: r.variables,
    started_at: iso(r.startedAt),
    answered_at: iso(r.answeredAt),
    ended_at: iso(r.endedAt),
    duration_s: r.durationS,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  }
}

export async function loadCall(ex: Executor, accountId: string, id: string): Promise<CallRow> {
  const [row] = await ex
    .select()
    .from(calls)
    .where(and(eq(calls.id, id), eq(calls.accountId, accountId)))
  if (!row) throw Errors.notFound('Call')
  return row
}

/** Newest first; `req` is bound to the filters and sort -created_at,-id. */
export async function listCalls(ex: Executor, accountId: string, q: CallListQuery, req: KeysetRequest) {
  const rows = await ex
    .select()
    .from(calls)
    .where(
      and(
        eq(calls.accountId, accountId),
        q.status ? eq(calls.status, q.status) : undefined,
        q.agent_id ? eq(calls.agentId, q.agent_id) : undefined,
        q.campaign_id ? eq(calls.campaignId, q.campaign_id) : undefined,
        q.from ? eq(calls.fromE164, q.from) : undefined,
        q.to ? eq(calls.toE164, q.to) : undefined,
        afterPosition(req, calls.createdAt, calls.id),
      ),
    )
    .orderBy(desc(calls.createdAt), desc(calls.id))
    .limit(req.binding.limit + 1)
  return keysetPage(req, rows, (r) => [r.createdAt.toISOString(), r.id], presentCall)
}

const EVENT_OF: Partial<Record<CallStatus, string>> = {
  completed: 'call.completed',
  failed: 'call.failed',
  no_answer: 'call.no_answer',
}

/**
 * Moves a call from one of `from` to `patch.status`; null when it was not in one of them (someone else
 * moved it first). An end state stamps ended_at and writes its call.* event in the same transaction.
 */
export async function moveCall(
  tx: Executor,
  id: string,
  from: readonly CallStatus[],
  patch: Partial<Omit<CallRow, 'id' | 'status'>> & { status: CallStatus },
): Promise<CallRow | null> {
  const now = new Date()
  const final = patch.status in EVENT_OF || patch.status === 'canceled'
  const [row] = await tx
    .update(calls)
    .set({ ...patch, updatedAt: now, ...(final && !patch.endedAt ? { endedAt: now } : {}) })
    .where(and(eq(calls.id, id), inArray(calls.status, [...from])))
    .returning()
  if (!row) return null
  const type = EVENT_OF[row.status as CallStatus]
  if (type) await emitEvent(tx, { accountId: row.accountId, type, data: presentCall(row) as never, at: now })
  return row
}

/** Calls of the account holding a line: ringing or in progress (queued ones wait for a line). */
export async function outboundLive(tx: Executor, accountId: string): Promise<number> {
  const [{ n }] = rowsOf<{ n: number }>(
    await tx.execute(
      sql`SELECT count(*)::int AS n FROM calls WHERE account_id = ${accountId} AND status IN ('ringing', 'in_progress')`,
    ),
  )
  return Number(n)
}
