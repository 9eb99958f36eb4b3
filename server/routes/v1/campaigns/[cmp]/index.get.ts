import { defineApiRoute } from '~/http/define-api-route'
import { campaignAccount, getCampaign } from '~/domain/campaigns/campaigns'
import { Campaign, CampaignParams } from '~/domain/campaigns/schemas'

export default defineApiRoute({
  summary: 'Read a campaign',
  description: 'The campaign with its progress (the same object as GET /campaigns/{cmp}/progress).',
  tags: ['Outbound'],
  scope: 'outbound:read',
  dataRoute: true,
  params: CampaignParams,
  response: Campaign,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, account, params }) => getCampaign(runtime, campaignAccount(account), params.cmp),
})
