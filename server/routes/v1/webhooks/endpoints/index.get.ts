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
  handler: async ({ event, runtime, principal, account, query }) =>
    asList(await listEndpoints(event, runtime, principal, webhookAccount(account), query)),
})
