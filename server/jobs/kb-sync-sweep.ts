// The scheduler of knowledge syncs (decisions "Knowledge sync"): every SVC_KB_SYNC_SWEEP_SECONDS each instance
// looks for agents whose daily or weekly moment has passed since their pages were last fetched. The run
// re-sends itself; the `short` policy keeps one waiting link, and the minute tick and the start-up run restart
// the chain when a link was lost. Several instances may sweep at once: createSync decides under the agent's
// row lock, so a due sync is created once.
import { defineJob } from '~/kit/job'
import { sweepScheduledSyncs } from '~/domain/kb/sync'

export const KB_SYNC_SWEEP_JOB = 'kb.sync-sweep'

export default defineJob({
  name: KB_SYNC_SWEEP_JOB,
  schedule: '* * * * *',
  runAtStart: true,
  policy: 'short',
  retryLimit: 0,
  async run(_data, ctx) {
    try {
      const n = await sweepScheduledSyncs(ctx)
      if (n) ctx.log(`kb sync sweep: started ${n} scheduled sync(s)`)
    } finally {
      if (ctx.config.kbSyncSweepSeconds < 60)
        await ctx.send(
          KB_SYNC_SWEEP_JOB,
          {},
          { startAfter: new Date(Date.now() + ctx.config.kbSyncSweepSeconds * 1000) },
        )
    }
  },
})
