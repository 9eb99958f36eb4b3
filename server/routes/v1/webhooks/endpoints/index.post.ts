import { defineApiRoute } from '~/http/define-api-route'
import { CreateEndpointBody, EndpointWithSecret } from '~/domain/webhooks/schemas'
import { createEndpoint, webhookAccount } from '~/domain/webhooks/endpoints'

export default defineApiRoute({
  summary: 'Create a webhook endpoint',
  description:
    'Body {url, events[], description?, enabled?}. The url must be https (plain http only for hosts in SVC_ALLOW_PRIVATE_HOSTS) and must not point to a private, ' +
    'loopback or internal address (400 invalid_url). events names at least one of conversation.started, conversation.ended, conversation.escalated, ' +
    'conversation.deleted, summary.ready, call.completed, call.failed, call.no_answer, test_run.completed. Answers 201 with the endpoint and its whsec_ signing secret, shown this once. ' +
    'At most 20 endpoints per account (deleted ones do not count): the 21st is 403 plan_limit_reached.',
  tags: ['Webhooks'],
  scope: 'webhooks:manage',
  dataRoute: true,
  status: 201,
  body: CreateEndpointBody,
  response: EndpointWithSecret,
  secretResponse: true,
  errors: ['invalid_url', 'unsupported_field', 'validation_error', 'plan_limit_reached'],
  handler: ({ runtime, account, body }) => createEndpoint(runtime, webhookAccount(account), body),
})
