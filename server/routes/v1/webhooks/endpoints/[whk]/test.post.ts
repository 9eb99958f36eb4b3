import { defineApiRoute } from '~/http/define-api-route'
import { EndpointParams, TestResult } from '~/domain/webhooks/schemas'
import { testEndpoint, webhookAccount } from '~/domain/webhooks/endpoints'

export default defineApiRoute({
  summary: 'Send a test ping',
  description:
    'Sends one signed event of type ping to the endpoint now (enabled or not) and answers what the receiver did: success (a 2xx within 10 s), ' +
    'status_code, latency_ms, error, plus the webhook_tests quota after this ping. Not retried. Stored as a delivery with event_type ping under ' +
    'the delivery_id sent in X-Svc-Delivery (listed, readable and replayable like any delivery); never sent to another endpoint. Counts against the ' +
    'daily webhook_tests quota (429 quota_exceeded when used up).',
  tags: ['Webhooks'],
  scope: 'webhooks:manage',
  dataRoute: true,
  params: EndpointParams,
  response: TestResult,
  errors: ['invalid_id', 'not_found', 'quota_exceeded'],
  handler: ({ runtime, account, params }) => testEndpoint(runtime, webhookAccount(account), params.whk),
})
