// One knowledge sync (decisions "Knowledge sync"), manual or scheduled. Claimed by the sync row, so a
// repeated delivery does nothing; a sync whose instance died is failed by the next request or sweep.
import { defineJob } from '~/kit/job'
import { runSync, SYNC_JOB } from '~/domain/kb/sync'

export default defineJob<{ sync_id: string }>({
  name: SYNC_JOB,
  retryLimit: 1,
  concurrency: 2,
  async run(data, ctx) {
    await runSync(ctx, data.sync_id)
  },
})
