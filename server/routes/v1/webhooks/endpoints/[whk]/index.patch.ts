import { defineApiRoute } from '~/http/define-api-route'
import { Endpoint, EndpointParams, PatchEndpointBody } from '~/domain/webhooks/schemas'
import { patchEndpoint, webhookAccount } from '~/domain/webhooks/endpoints'

export default defineApiRoute({
  summary: 'Update a webhook endpoint',
  description:
    'Any of url, events (replaces the list), description (null clears), enabled. A disabled endpoint is sent nothing: events written while it is disabled are not delivered to it. The secret is changed only by rotate-secret.',
  tags: ['Webhooks'],
  scope: 'webhooks:manage',
  dataRoute: true,
  params: EndpointParams,
  body: PatchEndpointBody,
  patch: true,
  response: Endpoint,
  errors: ['invalid_id', 'not_found', 'invalid_url', 'unsupported_field', 'validation_error', 'empty_update'],
  handler: ({ runtime, account, params, body }) => patchEndpoint(runtime, webhookAccount(account), params.whk, body),
})
