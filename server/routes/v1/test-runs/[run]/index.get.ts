import { defineApiRoute } from '~/http/define-api-route'
import { getRun } from '~/domain/agent-tests/runs'
import { testAccount } from '~/domain/agent-tests/tests'
import { RunParams, TestRun } from '~/domain/agent-tests/schemas'

export default defineApiRoute({
  summary: 'Read a test run',
  description:
    'The run with its counters and results: one per test and attempt {test_id, attempt, status, error, turns: [{user, ' +
    'answer, tools[], unanswered, escalated, assertions: [{type, passed, detail}]}]}; passed is null for a skipped ' +
    "assertion. Another account's or an unknown run is 404 not_found.",
  tags: ['Agent tests'],
  scope: 'agents:read',
  dataRoute: true,
  params: RunParams,
  response: TestRun,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, account, params }) => getRun(runtime, testAccount(account), params.run),
})
