// Calls of an instance that died: found by its silence in `instances` and closed by any other instance
// (the outbound.sweep job and each process's beat). An interrupted call's conversation is closed exactly as
// its session would have closed it (finish.ts: usage seconds, conversation.ended, the summary job), so
// nothing about it stays "in progress".
import { and, eq, inArray, isNotNull, isNull, lt, ne, notInArray, or, type SQLWrapper, sql } from 'drizzle-orm'
import { calls, conversations, instances } from '~/db/schema'
import { closeConversation } from './finish'
import type { CallRow } from './calls'
import { type OutboundCtx, RING_TIMEOUT_S, settle } from './outbound'
import { INSTANCE_ID } from './instance'

/**
 * An in-progress call of a dead instance: its conversation closes (which completes the call), else the call
 * alone. Either way the follow-ups (campaign contact, queued calls) run. True when this sweep ended it.
 */
async function closeInterrupted(ctx: OutboundCtx, call: CallRow, now: Date): Promise<boolean> {
  const durationS = call.answeredAt ? Math.max(0, Math.round((now.getTime() - call.answeredAt.getTime()) / 1000)) : 0
  if (call.conversationId) {
    const closed = await closeConversation(
      ctx,
      call.conversationId,
      { reason: 'interrupted', durationS, recording: null },
      now,
    )
    if (closed) return true
  }
  const row = await settle(ctx, call.id, ['in_progress'], {
    status: 'completed',
    outcome: 'interrupted',
    failureReason: 'interrupted',
    durationS,
  })
  return !!row
}

/**
 * Voice conversations (inbound phone, voice chat, and outbound calls whose media reached another instance)
 * whose session lived on an instance that stopped beating: closed as interrupted, as their session would
 * have closed them, which frees the account's line and completes an outbound call with them.
 */
async function reconcileSessions(ctx: OutboundCtx, alive: SQLWrapper, now: Date) {
  const orphans = await ctx.database.db
    .select({ id: conversations.id, startedAt: conversations.startedAt })
    .from(conversations)
    .where(
      and(
        eq(conversations.status, 'in_progress'),
        isNotNull(conversations.ownerInstance),
        ne(conversations.ownerInstance, INSTANCE_ID),
        notInArray(conversations.ownerInstance, alive),
      ),
    )
    .limit(500)
  let n = 0
  for (const conv of orphans) {
    const durationS = Math.max(0, Math.round((now.getTime() - conv.startedAt.getTime()) / 1000))
    if (await closeConversation(ctx, conv.id, { reason: 'interrupted', durationS, recording: null }, now)) n++
  }
  return n
}

/**
 * Calls whose owner stopped beating `staleS` ago died with it: one that was ringing was not answered as far
 * as we know (no_answer, failure_reason interrupted), one in progress completes with outcome interrupted and
 * closes its conversation. Calls ringing past RING_TIMEOUT_S are not answered either. Answers the count.
 */
export async function reconcileCalls(ctx: OutboundCtx, staleS: number, now = new Date()) {
  const db = ctx.database.db
  const staleAt = new Date(now.getTime() - staleS * 1000)
  const alive = db
    .select({ id: instances.id })
    .from(instances)
    .where(sql`${instances.seenAt} >= ${staleAt.toISOString()}::timestamptz`)
  const orphans = await db
    .select()
    .from(calls)
    .where(
      and(
        inArray(calls.status, ['ringing', 'in_progress']),
        or(
          isNull(calls.ownerInstance),
          // This process is alive whatever its last beat says (on PGlite it beats seldom once it is alone).
          and(ne(calls.ownerInstance, INSTANCE_ID), notInArray(calls.ownerInstance, alive)),
          and(eq(calls.status, 'ringing'), lt(calls.startedAt, new Date(now.getTime() - RING_TIMEOUT_S * 1000))),
        ),
      ),
    )
    .limit(500)
  let n = await reconcileSessions(ctx, alive, now)
  for (const call of orphans) {
    // The owner's own session may still be alive (a ring timeout): it ends the call itself.
    if (call.ownerInstance === INSTANCE_ID && call.status === 'in_progress') continue
    const ended =
      call.status === 'ringing'
        ? !!(await settle(ctx, call.id, ['ringing'], {
            status: 'no_answer',
            outcome: 'no_answer',
            failureReason: call.ownerInstance === INSTANCE_ID ? 'ring_timeout' : 'interrupted',
          }))
        : await closeInterrupted(ctx, call, now)
    if (ended) n++
  }
  // Old heartbeats are kept a day (they name the owners of old calls only).
  await db.delete(instances).where(lt(instances.seenAt, new Date(now.getTime() - 86_400_000)))
  return n
}
