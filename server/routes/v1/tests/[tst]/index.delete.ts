import { defineApiRoute } from '~/http/define-api-route'
import { deleteTest, testAccount } from '~/domain/agent-tests/tests'
import { TestParams } from '~/domain/agent-tests/schemas'

export default defineApiRoute({
  summary: 'Delete a test',
  description: 'Deletes the test (runs already asked for keep their copy and results). 204.',
  tags: ['Agent tests'],
  scope: 'agents:write',
  dataRoute: true,
  params: TestParams,
  status: 204,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, account, params }) => deleteTest(runtime, testAccount(account), params.tst),
})
