import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { createTest } from '~/domain/agent-tests/tests'
import { AgentTest, CreateTestBody } from '~/domain/agent-tests/schemas'

export default defineApiRoute({
  summary: 'Create a test of an agent',
  description:
    'Body {name, surface?: chat (default) | phone | voice_chat, turns: [{user, expect?: [Assertion]}] (1–20 turns, at most 10 ' +
    'assertions each), reference_answers?}. Assertions: {type: contains | not_contains, value} (case-insensitive), ' +
    '{type: regex, pattern} (at most 200 characters, RE2 syntax run in linear time: a pattern RE2 cannot compile, such as a ' +
    'backreference or lookaround, or one of more than 2,000 RE2 instructions, is 400 validation_error naming ' +
    'turns.<i>.expect.<j>.pattern), {type: tool_called | tool_not_called, name}, {type: unanswered | escalated, value: boolean}, ' +
    "{type: judge, rubric} (graded by the agent's chat engine; skipped with the local engine). Each assertion reads the " +
    "agent's answer to its own turn. An agent holds at most 100 tests (403 plan_limit_reached).",
  tags: ['Agent tests'],
  scope: 'agents:write',
  dataRoute: true,
  status: 201,
  params: AgentParams,
  body: CreateTestBody,
  response: AgentTest,
  errors: ['invalid_id', 'agent_not_found', 'unsupported_field', 'validation_error', 'plan_limit_reached'],
  handler: ({ runtime, principal, account, params, body }) =>
    createTest(runtime, agentAccount(principal, account), params.agt, body),
})
