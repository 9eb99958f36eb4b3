// The end of a call (or of a browser voice chat): the conversation completes with its duration (answer to hang-up, on the call's audio
// clock) and why it ended, the recording is stored, the session's usage gets its voice seconds and their
// cost, conversation.ended fires and the summary job is queued. Ending twice changes nothing.
import { and, eq, sql } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { conversations, turns } from '~/db/schema'
import type { SessionRuntime } from '~/kit/runtime'
import { emitEvent } from '~/domain/events/emit'
import { closeUsage, usageSessionOf } from '~/domain/conversations/billing'
import type { ConversationRow } from '~/domain/conversations/chat-schemas'
import { conversationResource } from '~/domain/conversations/read'
import { SUMMARIZE_JOB } from '~/domain/conversations/summarize'
import { afterSettled, completeCallOfConversation, outboundCtx, type OutboundCtx } from './outbound'
import type { Recording } from './recording'

export type EndReason =
  | 'caller_hung_up'
  | 'silence_timeout'
  | 'max_duration'
  | 'end_phrase'
  | 'transferred'
  | 'conversation_closed'
  | 'voicemail'
  | 'error'

/** decisions: voice is billed per second at this price per minute, on top of the turns' tokens. */
export const VOICE_PRICE_PER_MINUTE = 0.05

export const recordingKey = (sid: string) => `recordings/${sid}.mp3`

/**
 * A line of its own as the next turn, with its place in the audio: the host's greeting or closing line
 * (agent), or the caller's last words when the call ended before any answer to them was heard (visitor).
 */
export async function writeLine(
  database: Database,
  conv: ConversationRow,
  line: { speaker: 'agent' | 'visitor'; text: string; turnType: 'greeting' | 'answer' | 'message' },
  audio: { offsetMs: number; durationMs: number },
) {
  await database.tx(async (tx) => {
    const [row] = await tx
      .update(conversations)
      .set({ turnCount: sql`${conversations.turnCount} + 1`, updatedAt: new Date() })
      .where(eq(conversations.id, conv.id))
      .returning({ turnCount: conversations.turnCount })
    await tx.insert(turns).values({
      conversationId: conv.id,
      turnIndex: row.turnCount - 1,
      speaker: line.speaker,
      text: line.text,
      timestamp: new Date(),
      turnType: line.turnType,
      detectedLanguage: conv.language,
      audioOffsetMs: audio.offsetMs,
      audioDurationMs: audio.durationMs,
    })
  })
}

export async function finishCall(
  runtime: SessionRuntime,
  conv: ConversationRow,
  end: { reason: string; durationS: number; recording: Recording | null },
) {
  const sid = `rec_${conv.id}`
  if (end.recording) await runtime.blobs.put(recordingKey(sid), end.recording.mp3)
  const recording = end.recording
    ? { sid, duration_s: end.recording.durationS, format: 'mp3', bytes: end.recording.mp3.length }
    : null
  await closeConversation(outboundCtx(runtime), conv.id, { reason: end.reason, durationS: end.durationS, recording })
}

/**
 * Closes a voice conversation that is still in progress, whoever ends it (its session, or the sweep for a
 * call whose instance died): status, duration and end reason, the stored recording's facts, the usage's voice
 * seconds, `conversation.ended`, the outbound call and its campaign contact, then the summary job. Answers
 * false when the conversation was no longer in progress (ending twice changes nothing).
 */
export async function closeConversation(
  ctx: OutboundCtx,
  conversationId: string,
  end: { reason: string; durationS: number; recording: Record<string, unknown> | null },
  now = new Date(),
): Promise<boolean> {
  let call: Awaited<ReturnType<typeof completeCallOfConversation>> = null
  const ended = await ctx.database.tx(async (tx) => {
    const [row] = await tx
      .update(conversations)
      .set({
        status: 'completed',
        endedAt: now,
        updatedAt: now,
        turnLockedUntil: null,
        metrics: sql`${conversations.metrics} || ${JSON.stringify({ duration_s: end.durationS, end_reason: end.reason })}::jsonb`,
        ...(end.recording ? { hasRecording: true, recording: end.recording } : {}),
      })
      .where(and(eq(conversations.id, conversationId), eq(conversations.status, 'in_progress')))
      .returning()
    if (!row) return null
    // A phone test of an agent test run (decisions "Test runs"): not billed, no event, no summary; the run
    // reads its turns and deletes it.
    if (row.testRunId) return row
    await closeUsage(tx, {
      ...usageSessionOf(row),
      endedAt: now,
      voice: { seconds: end.durationS, costUsd: (end.durationS / 60) * VOICE_PRICE_PER_MINUTE },
    })
    await emitEvent(tx, {
      accountId: row.accountId,
      type: 'conversation.ended',
      data: await conversationResource(tx, row),
    })
    // An outbound call completes with its conversation (and its campaign contact moves on).
    call = await completeCallOfConversation(ctx, tx, row, {
      durationS: end.durationS,
      reason: end.reason,
      endedAt: now,
    })
    return row
  })
  if (call) await afterSettled(ctx, call)
  if (ended && !ended.testRunId)
    await ctx.send(SUMMARIZE_JOB, { conversation_id: ended.id }, { singletonKey: ended.id })
  return !!ended
}
