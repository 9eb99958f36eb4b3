// Every minute and at every start: calls whose instance died are reconciled, queued calls take free lines,
// and every running campaign gets a dispatch round (windows that opened, rounds lost to a crash).
import { defineJob } from '~/kit/job'
import { dispatchAllCampaigns } from '~/domain/calls/dialer'
import { dispatchAllQueued } from '~/domain/calls/outbound'
import { reconcileCalls } from '~/domain/calls/reconcile'

export default defineJob({
  name: 'outbound.sweep',
  schedule: '* * * * *',
  runAtStart: true,
  retryLimit: 0,
  async run(_data, ctx) {
    await reconcileCalls(ctx, ctx.config.callStaleSeconds)
    await dispatchAllQueued(ctx)
    await dispatchAllCampaigns(ctx)
  },
})
