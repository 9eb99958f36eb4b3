// POST /conversations/{conv}/end: completed, ended_at, conversation.ended, then the summary job. Ending
// again answers 200 with no second event; it re-enqueues the summary while that is still pending (the
// job is idempotent), which also recovers a summary whose enqueue was lost.
import { eq } from 'drizzle-orm'
import { conversations } from '~/db/schema'
import type { Runtime } from '~/kit/runtime'
import { emitEvent } from '~/domain/events/emit'
import { closeUsage } from './billing'
import { conversationResource, loadConversation } from './read'
import { SUMMARIZE_JOB } from './summarize'

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
    await closeUsage(tx, {
      accountId,
      agentId: conv.agentId,
      agentType: conv.agentType,
      channel: conv.channel,
      sessionId: conv.sessionId,
      startedAt: conv.startedAt,
      endedAt: now,
    })
    await emitEvent(tx, { accountId, type: 'conversation.ended', data: await conversationResource(tx, ended) })
    return ended
  })
  if (row.summaryStatus !== 'ready')
    await runtime.queue.send(SUMMARIZE_JOB, { conversation_id: row.id }, { singletonKey: row.id })
  // Read again: the summary job may already have written it.
  const [now] = await database.db.select().from(conversations).where(eq(conversations.id, row.id))
  return conversationResource(database.db, now ?? row)
}
