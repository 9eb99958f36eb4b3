import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { campaignAccount, listCampaigns } from '~/domain/campaigns/campaigns'
import { Campaign, CampaignListQuery } from '~/domain/campaigns/schemas'

export default defineApiRoute({
  summary: 'List campaigns',
  description:
    "The account's campaigns, newest first, keyset pages, each with its progress. agent_id keeps one agent's campaigns " +
    "(another account's agent: an empty page); status keeps one status.",
  tags: ['Outbound'],
  scope: 'outbound:read',
  dataRoute: true,
  query: CampaignListQuery,
  response: v.object({ data: v.array(Campaign) }),
  errors: ['invalid_id', 'invalid_limit', 'invalid_cursor', 'unsupported_filter'],
  handler: async ({ runtime, account, query, keyset }) => {
    const accountId = campaignAccount(account)
    const page = await keyset({
      filters: { account_id: accountId, agent_id: query.agent_id ?? null, status: query.status ?? null },
      sort: '-created_at,-id',
      limit: query.limit,
      cursor: query.cursor,
    })
    return asList(await listCampaigns(runtime, accountId, { agentId: query.agent_id, status: query.status }, page))
  },
})
