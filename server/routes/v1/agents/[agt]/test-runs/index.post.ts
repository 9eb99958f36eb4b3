import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { createRun } from '~/domain/agent-tests/runs'
import { CreateRunBody, TestRun } from '~/domain/agent-tests/schemas'

export default defineApiRoute({
  summary: "Run an agent's tests",
  description:
    'Body {test_ids?, prompt_version?, repeat?: 1–10 (default 1)}. Answers 202 with the run (status queued), carried out ' +
    'in the background; poll GET /test-runs/{run} or subscribe to test_run.completed. Every test of the agent runs unless ' +
    'test_ids names some; prompt_version (a label of GET /agents/{agt}/prompts, or its pv_<n> id) is the candidate the ' +
    'tests of its surface talk to without activating it (default: the active prompts). Phone tests go through a simulated ' +
    'call (the whole voice loop, offline speech); chat and voice_chat tests through the chat turn. Tools run dry: recorded in ' +
    "the run's turns, but no mail, webhook or call. A run is not billed and leaves no conversation; its turns (tests' turns × " +
    'repeat) count against the daily test_turns quota (default 2,000; 429 quota_exceeded). Each attempt is passed (every ' +
    'graded assertion held), failed, skipped (nothing graded) or error; pass_rate = passed / (passed + failed). An unknown ' +
    'test or prompt version, or an agent without tests, is 400 validation_error.',
  tags: ['Agent tests'],
  scope: 'agents:write',
  dataRoute: true,
  status: 202,
  params: AgentParams,
  body: CreateRunBody,
  response: TestRun,
  errors: ['invalid_id', 'agent_not_found', 'unsupported_field', 'validation_error', 'quota_exceeded'],
  handler: ({ runtime, principal, account, params, body }) =>
    createRun(runtime, agentAccount(principal, account), params.agt, body),
})
