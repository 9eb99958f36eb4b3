import { defineApiRoute } from '~/http/define-api-route'
import { Agent, AgentParams } from '~/domain/agents/schemas'
import { agentAccount, getAgent } from '~/domain/agents/agents'

export default defineApiRoute({
  summary: 'Read an agent',
  description:
    'The full Agent with nested voice and widget blocks (the widget reports has_public_token, never the token). model is the chat model actually used, resolved from use_large_model. An agent of another account is 404 agent_not_found.',
  tags: ['Agents'],
  scope: 'agents:read',
  dataRoute: true,
  params: AgentParams,
  response: Agent,
  errors: ['invalid_id', 'agent_not_found'],
  handler: ({ runtime, principal, account, params }) => getAgent(runtime, agentAccount(principal, account), params.agt),
})
