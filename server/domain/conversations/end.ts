// POST /conversations/{conv}/end: completed, ended_at, conversation.ended, then the summary job. Ending
// again answers 200 with no second event; it re-enqueues the summary while that is still pending (the
// job is idempotent), which also recovers a summary whose enqueue was lost. The idle sweep (idle.ts)
// ends conversations with the same pieces: recordEnd in the closing transaction, queueSummary after it.
import { eq } from 'drizzle-orm'
import type { Executor } from '~/db/client'
import { conversations } from '~/db/schema'
import type { JobContext } from '~/kit/job'
import type { Runtime } from '~/kit/runtime'
import { emitEvent } from '~/domain/events/emit'
import { closeUsage, usageSessionOf } from './billing'
import type { ConversationRow } from './present'
import { conversationResource, loadConversation } from './read'
import { SUMMARIZE_JOB } from './summarize'

/**
 * What every end of a chat writes beside the status move, inside the transaction that made it: the
 * session's usage row stamped with ended_at, and conversation.ended (data: the conversation as GET shows
 * it). A soft-deleted conversation gets no event: it is gone from every read and its deletion was announced.
 */
export async function recordEnd(tx: Executor, row: ConversationRow) {
  await closeUsage(tx, {
    ...usageSessionOf(row),
    endedAt: row.endedAt ?? new Date(),
  })
  if (row.deletedAt) return
  await emitEvent(tx, {
    accountId: row.accountId,
    type: 'conversation.ended',
    data: await conversationResource(tx, row),
  })
}

/** Queues the summary of an ended conversation unless it is ready (the job is idempotent; the key folds repeats). */
export async function queueSummary(send: JobContext['send'], row: Pick<ConversationRow, 'id' | 'summaryStatus'>) {
  if (row.summaryStatus !== 'ready') await send(SUMMARIZE_JOB, { conversation_id: row.id }, { singletonKey: row.id })
}

export async function endConversation(runtime: Runtime, accountId: string, convId: string) {
  const { database } = runtime
  const row = await database.tx(async (tx) => {
    const conv = await loadConversation(tx, [accountId], convId, true)
    if (conv.status !== 'in_progress') return conv
    const now = new Date()
    const [ended] = await tx
      .update(conversations)
      .set({ status: 'completed', endedAt: now, updatedAt: now })
      .where(eq(conversations.id, conv.id))
      .returning()
    await recordEnd(tx, ended)
    return ended
  })
  await queueSummary(runtime.queue.send, row)
  // Read again: the summary job may already have written it.
  const [now] = await database.db.select().from(conversations).where(eq(conversations.id, row.id))
  return conversationResource(database.db, now ?? row)
}
