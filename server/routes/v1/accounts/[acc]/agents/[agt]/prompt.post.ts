import { defineApiRoute } from '~/http/define-api-route'
import { AccountAgentParams, DeployResult, PromptCreate } from '~/domain/agents/schemas'
import { agentAccount } from '~/domain/agents/agents'
import { createPrompt } from '~/domain/agents/prompts'

export default defineApiRoute({
  summary: 'Deploy a prompt version (account alias)',
  description: 'Alias of POST /agents/{agt}/prompts; the agent must belong to {acc}.',
  tags: ['Prompts'],
  scope: 'agents:write',
  dataRoute: true,
  params: AccountAgentParams,
  body: PromptCreate,
  status: 201,
  response: DeployResult,
  errors: [
    'invalid_id',
    'agent_not_found',
    'unsupported_field',
    'validation_error',
    'version_label_exists',
    'tests_failed',
    'quota_exceeded',
  ],
  handler: ({ runtime, principal, account, params, body }) =>
    createPrompt(runtime, agentAccount(principal, account, params.acc), params.agt, body),
})
