import { defineApiRoute } from '~/http/define-api-route'
import { campaignAccount, getProgress } from '~/domain/campaigns/campaigns'
import { CampaignParams, Progress } from '~/domain/campaigns/schemas'

export default defineApiRoute({
  summary: 'Read the progress of a campaign',
  description:
    "Contacts by status ({total, pending, in_progress, completed, no_answer, failed, dnc_skipped}) and outcomes, the contacts per non-null call outcome. A draft's counts are all 0 (its contacts are copied at the first start).",
  tags: ['Outbound'],
  scope: 'outbound:read',
  dataRoute: true,
  params: CampaignParams,
  response: Progress,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, account, params }) => getProgress(runtime, campaignAccount(account), params.cmp),
})
