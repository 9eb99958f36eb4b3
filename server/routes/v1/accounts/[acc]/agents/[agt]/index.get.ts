import { defineApiRoute } from '~/http/define-api-route'
import { AccountAgentParams, Agent } from '~/domain/agents/schemas'
import { agentAccount, getAgent } from '~/domain/agents/agents'

export default defineApiRoute({
  summary: 'Read an agent (account alias)',
  description: 'Alias of GET /agents/{agt}; the agent must belong to {acc}.',
  tags: ['Agents'],
  scope: 'agents:read',
  dataRoute: true,
  params: AccountAgentParams,
  response: Agent,
  errors: ['invalid_id', 'agent_not_found'],
  handler: ({ runtime, principal, account, params }) =>
    getAgent(runtime, agentAccount(principal, account, params.acc), params.agt),
})
