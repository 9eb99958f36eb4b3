import { defineApiRoute } from '~/http/define-api-route'
import { campaignAccount, transitionCampaign } from '~/domain/campaigns/campaigns'
import { Campaign, CampaignParams } from '~/domain/campaigns/schemas'

export default defineApiRoute({
  summary: 'Pause a campaign',
  description:
    'running → paused: no new calls are placed until it is started again; calls in progress finish. Any other status is 409 invalid_state. Answers 200 with the campaign.',
  tags: ['Outbound'],
  scope: 'outbound:write',
  dataRoute: true,
  params: CampaignParams,
  response: Campaign,
  errors: ['invalid_id', 'not_found', 'invalid_state'],
  handler: ({ runtime, account, params }) => transitionCampaign(runtime, campaignAccount(account), params.cmp, 'pause'),
})
