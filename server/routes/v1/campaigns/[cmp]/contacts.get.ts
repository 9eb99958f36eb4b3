import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { campaignAccount, listContacts } from '~/domain/campaigns/campaigns'
import { CampaignContact, CampaignParams, ContactListQuery } from '~/domain/campaigns/schemas'

export default defineApiRoute({
  summary: "List a campaign's contacts",
  description:
    "The campaign's contacts in item id order (the list's import order), keyset pages (limit up to 1000, default 100); " +
    'status keeps one contact status. A draft has none yet: its contacts are copied from the list at the first start.',
  tags: ['Outbound'],
  scope: 'outbound:read',
  dataRoute: true,
  params: CampaignParams,
  query: ContactListQuery,
  response: v.object({ data: v.array(CampaignContact) }),
  errors: ['invalid_id', 'not_found', 'invalid_limit', 'invalid_cursor', 'unsupported_filter'],
  handler: async ({ runtime, account, params, query, keyset }) => {
    const accountId = campaignAccount(account)
    const page = await keyset({
      filters: { campaign_id: params.cmp, status: query.status ?? null },
      sort: 'item_id',
      limit: query.limit,
      cursor: query.cursor,
    })
    return asList(await listContacts(runtime, accountId, params.cmp, { status: query.status }, page))
  },
})
