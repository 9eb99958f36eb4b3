import { defineApiRoute } from '~/http/define-api-route'
import { AGENT_PATCH_DESCRIPTION, AccountAgentParams, AgentPatch, AgentWriteResult } from '~/domain/agents/schemas'
import { agentAccount, patchAgent } from '~/domain/agents/agents'

export default defineApiRoute({
  summary: 'Update an agent (account alias)',
  description: `Alias of PATCH /agents/{agt}; the agent must belong to {acc}. ${AGENT_PATCH_DESCRIPTION}`,
  tags: ['Agents'],
  scope: 'agents:write',
  dataRoute: true,
  params: AccountAgentParams,
  body: AgentPatch,
  patch: true,
  response: AgentWriteResult,
  errors: [
    'invalid_id',
    'agent_not_found',
    'unsupported_field',
    'validation_error',
    'empty_update',
    'tests_failed',
    'quota_exceeded',
  ],
  handler: ({ runtime, principal, account, params, body }) =>
    patchAgent(
      runtime,
      agentAccount(principal, account, params.acc),
      params.agt,
      body,
      runtime.registries.capabilities,
    ),
})
