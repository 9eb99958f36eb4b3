import { defineApiRoute } from '~/http/define-api-route'
import { PromptParams, PromptVersion } from '~/domain/agents/schemas'
import { agentAccount } from '~/domain/agents/agents'
import { getPrompt } from '~/domain/agents/prompts'

export default defineApiRoute({
  summary: 'Read a prompt version',
  description: 'The prompt version including its body.',
  tags: ['Prompts'],
  scope: 'agents:read',
  dataRoute: true,
  params: PromptParams,
  response: PromptVersion,
  errors: ['invalid_id', 'agent_not_found', 'not_found'],
  handler: ({ runtime, principal, account, params }) =>
    getPrompt(runtime.database, agentAccount(principal, account), params.agt, params.pv),
})
