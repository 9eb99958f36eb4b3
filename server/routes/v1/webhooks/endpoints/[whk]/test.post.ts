import { defineApiRoute } from '../../../../../utils/define-api-route'
import { EndpointParams, TestResult } from '../../../../../domain/webhooks/schemas'
import { testEndpoint, webhookAccount } from '../../../../../domain/webhooks/endpoints'

export default defineApiRoute({
  summary: 'Send a test ping',
  description:
    'Sends one signed event of type ping to the endpoint now (enabled or not) and answers what the receiver did: success (a 2xx within 10 s), ' +
    'status_code, latency_ms, error, plus the webhook_tests quota after this ping. Not stored as a delivery and not retried. Counts against the daily ' +
    'webhook_tests quota (429 quota_exceeded when used up).',
  tags: ['Webhooks'],
  scope: 'webhooks:manage',
  dataRoute: true,
  params: EndpointParams,
  response: TestResult,
  errors: ['invalid_id', 'not_found', 'quota_exceeded'],
  handler: ({ runtime, account, params }) => testEndpoint(runtime, webhookAccount(account), params.whk),
})
