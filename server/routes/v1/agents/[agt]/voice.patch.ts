import { defineApiRoute } from '~/http/define-api-route'
import { AgentParams, VoicePatch, VoiceResult } from '~/domain/agents/schemas'
import { agentAccount } from '~/domain/agents/agents'
import { patchVoice } from '~/domain/agents/voice'

export default defineApiRoute({
  summary: 'Update the voice configuration',
  description:
    "voice_id, voice_locale, speaking_rate (0.5 to 2), barge_in, end_of_speech_ms (200 to 2000 ms of silence that end the caller's turn; null restores 500) and style, mirrored onto the agent (style is voice_style). A change of any value bumps agent_version once.",
  tags: ['Widget and voice'],
  scope: 'agents:write',
  dataRoute: true,
  params: AgentParams,
  body: VoicePatch,
  patch: true,
  response: VoiceResult,
  errors: ['invalid_id', 'agent_not_found', 'unsupported_field', 'validation_error', 'empty_update'],
  handler: ({ runtime, principal, account, params, body }) =>
    patchVoice(runtime, agentAccount(principal, account), params.agt, body),
})
