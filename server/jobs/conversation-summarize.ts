// Writes the structured summary of an ended conversation, then emits summary.ready (POST …/end enqueues
// it). Safe to deliver twice: the write is conditional on summary_status pending.
import { defineJob } from '~/kit/job'
import { SUMMARIZE_JOB, summarizeConversation } from '~/domain/conversations/summarize'
import { queueAnalysis } from '~/domain/analysis/analyze'

export default defineJob<{ conversation_id: string }>({
  name: SUMMARIZE_JOB,
  retryLimit: 3,
  retryDelaySeconds: 5,
  concurrency: 2,
  async run(data, ctx) {
    const engine = ctx.providers.chat
    await summarizeConversation(ctx.database, engine, data.conversation_id)
    // Every end (explicit, idle sweep, call or voice chat end, refused call) queues this job: the analysis
    // follows from here, also on a redelivery (its own key folds the repeat).
    await queueAnalysis(ctx.database, ctx.send, data.conversation_id)
  },
})
