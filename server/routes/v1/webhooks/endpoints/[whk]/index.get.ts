import { defineApiRoute } from '~/http/define-api-route'
import { Endpoint, EndpointParams } from '~/domain/webhooks/schemas'
import { getEndpoint, webhookAccount } from '~/domain/webhooks/endpoints'

export default defineApiRoute({
  summary: 'Get a webhook endpoint',
  description: "The endpoint without its secret. Another account's endpoint is 404 not_found.",
  tags: ['Webhooks'],
  scope: 'webhooks:manage',
  dataRoute: true,
  params: EndpointParams,
  response: Endpoint,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, account, params }) => getEndpoint(runtime, webhookAccount(account), params.whk),
})
