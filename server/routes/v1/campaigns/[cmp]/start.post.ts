import { defineApiRoute } from '~/http/define-api-route'
import { campaignAccount, transitionCampaign } from '~/domain/campaigns/campaigns'
import { Campaign, CampaignParams } from '~/domain/campaigns/schemas'

export default defineApiRoute({
  summary: 'Start or resume a campaign',
  description:
    "draft → running: the first start copies the list's contacts into the campaign (pending, 0 attempts) and sets " +
    'started_at; a campaign whose list is empty completes at once. paused → running resumes it. Any other status is ' +
    '409 invalid_state. With a real telephony provider a trial account cannot start a campaign (403 plan_limit_reached). ' +
    'Answers 200 with the campaign.',
  tags: ['Outbound'],
  scope: 'outbound:write',
  dataRoute: true,
  params: CampaignParams,
  response: Campaign,
  errors: ['invalid_id', 'not_found', 'invalid_state', 'plan_limit_reached'],
  handler: ({ runtime, account, params }) => transitionCampaign(runtime, campaignAccount(account), params.cmp, 'start'),
})
