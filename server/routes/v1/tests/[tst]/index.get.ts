import { defineApiRoute } from '~/http/define-api-route'
import { getTest, testAccount } from '~/domain/agent-tests/tests'
import { AgentTest, TestParams } from '~/domain/agent-tests/schemas'

export default defineApiRoute({
  summary: 'Read a test',
  description: "One test of an agent; another account's or an unknown test is 404 not_found.",
  tags: ['Agent tests'],
  scope: 'agents:read',
  dataRoute: true,
  params: TestParams,
  response: AgentTest,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, account, params }) => getTest(runtime, testAccount(account), params.tst),
})
