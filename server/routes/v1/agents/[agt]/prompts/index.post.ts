import { defineApiRoute } from '~/http/define-api-route'
import { AgentParams, DeployResult, PromptCreate } from '~/domain/agents/schemas'
import { agentAccount } from '~/domain/agents/agents'
import { createPrompt } from '~/domain/agents/prompts'

export default defineApiRoute({
  summary: 'Deploy a prompt version',
  description:
    "One transaction writes the agent column of that type, retires the active version, inserts the new immutable version, makes its label the agent's prompt_version and bumps agent_version. label is 1 to 80 characters and unique per agent.",
  tags: ['Prompts'],
  scope: 'agents:write',
  dataRoute: true,
  params: AgentParams,
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
    createPrompt(runtime, agentAccount(principal, account), params.agt, body),
})
