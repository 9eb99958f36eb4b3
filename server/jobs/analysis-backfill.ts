// One batch of an analysis backfill (POST /agents/{agt}/analysis/backfill); a full batch queues the next.
// Safe to deliver twice: analysed conversations are not selected again and the analysis key folds races.
import { defineJob } from '~/kit/job'
import { BACKFILL_JOB, runBackfillBatch, type BackfillJob } from '~/domain/analysis/backfill'

export default defineJob<BackfillJob>({
  name: BACKFILL_JOB,
  retryLimit: 3,
  retryDelaySeconds: 5,
  concurrency: 1,
  async run(data, ctx) {
    const written = await runBackfillBatch(ctx.database, ctx.providers.chat, ctx.send, data)
    ctx.log(`analysis backfill ${data.agent_id} v${data.analysis_version} after ${data.after ?? '-'}: ${written}`)
  },
})
