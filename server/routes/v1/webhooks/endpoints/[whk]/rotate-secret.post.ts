import { defineApiRoute } from '~/http/define-api-route'
import { EndpointParams, EndpointWithSecret } from '~/domain/webhooks/schemas'
import { rotateSecret, webhookAccount } from '~/domain/webhooks/endpoints'

export default defineApiRoute({
  summary: 'Rotate the signing secret',
  description:
    'Answers the endpoint with a new whsec_ secret, shown this once. For 24 hours (previous_secret_expires_at) deliveries carry one v1= signature per ' +
    'active secret, the new one first, so a receiver can switch without missing a delivery. A second rotation within those hours retires the oldest secret.',
  tags: ['Webhooks'],
  scope: 'webhooks:manage',
  dataRoute: true,
  params: EndpointParams,
  response: EndpointWithSecret,
  secretResponse: true,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, account, params }) => rotateSecret(runtime, webhookAccount(account), params.whk),
})
