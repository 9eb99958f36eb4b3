import { defineApiRoute } from '~/http/define-api-route'
import { AgentParams, VoiceConfig } from '~/domain/agents/schemas'
import { agentAccount } from '~/domain/agents/agents'
import { getVoice } from '~/domain/agents/voice'

export default defineApiRoute({
  summary: 'Read the voice configuration',
  description:
    "provider is the agent's ai_provider and model its realtime model (null when the provider is not installed).",
  tags: ['Widget and voice'],
  scope: 'agents:read',
  dataRoute: true,
  params: AgentParams,
  response: VoiceConfig,
  errors: ['invalid_id', 'agent_not_found'],
  handler: ({ runtime, principal, account, params }) => getVoice(runtime, agentAccount(principal, account), params.agt),
})
