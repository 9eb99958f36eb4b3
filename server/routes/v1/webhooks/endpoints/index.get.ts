import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { Endpoint, EndpointListQuery } from '~/domain/webhooks/schemas'
import { listEndpoints, webhookAccount } from '~/domain/webhooks/endpoints'

export default defineApiRoute({
  summary: 'List webhook endpoints',
  description: "The account's endpoints, newest first, keyset pages. Secrets are never shown.",
  tags: ['Webhooks'],
  scope: 'webhooks:manage',
  dataRoute: true,
  query: EndpointListQuery,
  response: v.object({ data: v.array(Endpoint) }),
  errors: ['invalid_limit', 'invalid_cursor'],
  handler: async ({ runtime, account, query, keyset }) => {
    const accountId = webhookAccount(account)
    const page = await keyset({
      filters: { account_id: accountId },
      sort: '-created_at,-id',
      limit: query.limit,
      cursor: query.cursor,
    })
    return asList(await listEndpoints(runtime, accountId, page))
  },
})
