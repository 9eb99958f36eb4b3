import { defineApiRoute } from '~/http/define-api-route'
import { patchTest, testAccount } from '~/domain/agent-tests/tests'
import { AgentTest, PatchTestBody, TestParams } from '~/domain/agent-tests/schemas'

export default defineApiRoute({
  summary: 'Update a test',
  description:
    'Any of name, surface, turns (replaced whole, checked as on create), reference_answers. A run already asked for ' +
    'keeps the test as it was.',
  tags: ['Agent tests'],
  scope: 'agents:write',
  dataRoute: true,
  params: TestParams,
  body: PatchTestBody,
  patch: true,
  response: AgentTest,
  errors: ['invalid_id', 'not_found', 'unsupported_field', 'validation_error', 'empty_update'],
  handler: ({ runtime, account, params, body }) => patchTest(runtime, testAccount(account), params.tst, body),
})
