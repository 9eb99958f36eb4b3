// A campaign's dispatch round at a due time (a retry's next attempt), sent by the dialler with startAfter.
import { defineJob } from '~/kit/job'
import { CAMPAIGN_DIAL_JOB, dispatchCampaign } from '~/domain/calls/dialer'

export default defineJob<{ campaign_id?: string }>({
  name: CAMPAIGN_DIAL_JOB,
  retryLimit: 2,
  async run(data, ctx) {
    if (typeof data.campaign_id === 'string') await dispatchCampaign(ctx, data.campaign_id)
  },
})
