// The idle sweep (decisions "Idle conversations": abandoned within 30 s of the idle time). pg-boss cron
// ticks once a minute at best, so each run re-sends itself IDLE_SWEEP_EVERY_S later; the queue's `short`
// policy keeps one waiting link for all instances. The minute tick and the start-up run restart the chain
// when a link was lost (a crash between the sweep and the send) and are dropped while one waits. Claims
// are guarded (domain/conversations/idle.ts), so overlapping sweeps never close a conversation twice.
import { defineJob } from '~/kit/job'
import { abandonIdleConversations } from '~/domain/conversations/idle'
import { releaseLapsedHolds } from '~/domain/conversations/holds'

export const IDLE_SWEEP_JOB = 'conversations.idle-sweep'
/** Between two sweeps (plus the poll interval): the 30 s bound leaves room for a slow sweep. */
export const IDLE_SWEEP_EVERY_S = 10

export default defineJob({
  name: IDLE_SWEEP_JOB,
  schedule: '* * * * *',
  runAtStart: true,
  policy: 'short',
  // A failed sweep is not retried: the next link runs in IDLE_SWEEP_EVERY_S anyway.
  retryLimit: 0,
  async run(_data, ctx) {
    try {
      // Holds first: a chat whose hold lapsed is then free to be abandoned by this same sweep.
      const released = await releaseLapsedHolds(ctx.database)
      if (released) ctx.log(`hold sweep: gave back ${released} lapsed turn hold(s) and their quota units`)
      // The operator's figure as this instance last polled it (admin/config.ts), else the environment's.
      const r = await abandonIdleConversations(ctx.database, ctx.send, ctx.config.conversationIdleSeconds)
      if (r.closed) ctx.log(`idle sweep: abandoned ${r.closed} conversation(s)`)
      for (const f of r.failed) ctx.log(`idle sweep: could not close ${f.id}: ${f.error}`)
    } finally {
      await ctx.send(IDLE_SWEEP_JOB, {}, { startAfter: new Date(Date.now() + IDLE_SWEEP_EVERY_S * 1000) })
    }
  },
})
