// Analyses an ended conversation at its agent's current analysis version (queued by the summary job, so
// every way a conversation ends leads here). Safe to deliver twice: the analysis row's key folds repeats.
import { defineJob } from '~/kit/job'
import { ANALYZE_JOB, analyzeConversation } from '~/domain/analysis/analyze'

export default defineJob<{ conversation_id: string; analysis_version: number }>({
  name: ANALYZE_JOB,
  retryLimit: 3,
  retryDelaySeconds: 5,
  concurrency: 2,
  async run(data, ctx) {
    await analyzeConversation(ctx.database, ctx.providers.chat, data.conversation_id)
  },
})
