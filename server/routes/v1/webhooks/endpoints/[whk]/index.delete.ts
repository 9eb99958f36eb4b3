import { defineApiRoute } from '~/http/define-api-route'
import { EndpointParams } from '~/domain/webhooks/schemas'
import { deleteEndpoint, webhookAccount } from '~/domain/webhooks/endpoints'

export default defineApiRoute({
  summary: 'Delete a webhook endpoint',
  description:
    'Additive to the contract. The endpoint stops receiving at once and reads as 404 afterwards; its deliveries stay listed. 204.',
  tags: ['Webhooks'],
  scope: 'webhooks:manage',
  dataRoute: true,
  params: EndpointParams,
  status: 204,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, account, params }) => deleteEndpoint(runtime, webhookAccount(account), params.whk),
})
