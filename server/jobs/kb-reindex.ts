// Rebuilds an agent's knowledge summary (POST /agents/{agt}/kb/reindex). Safe to deliver twice: runReindex
// claims its request first; a failure is recorded in summary.last_job and logged, not retried.
import { defineJob } from '~/kit/job'
import { REINDEX_JOB, runReindex } from '~/domain/kb/summary'

export default defineJob<{ agent_id: string; request_id: string }>({
  name: REINDEX_JOB,
  retryLimit: 2,
  concurrency: 2,
  async run(data, ctx) {
    const engine = ctx.providers.chat
    await runReindex(ctx.database, engine, data.agent_id, data.request_id, ctx.log)
  },
})
