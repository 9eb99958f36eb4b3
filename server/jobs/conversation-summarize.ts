// Writes the structured summary of an ended conversation, then emits summary.ready (POST …/end enqueues
// it). Safe to deliver twice: the write is conditional on summary_status pending.
import { defineJob } from '~/kit/job'
import { SUMMARIZE_JOB, summarizeConversation } from '~/domain/conversations/summarize'

export default defineJob<{ conversation_id: string }>({
  name: SUMMARIZE_JOB,
  retryLimit: 3,
  retryDelaySeconds: 5,
  concurrency: 2,
  async run(data, ctx) {
    const engine = ctx.providers.chat
    await summarizeConversation(ctx.database, engine, data.conversation_id)
  },
})
