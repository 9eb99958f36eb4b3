import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { CreateProfileBody, Profile } from '~/domain/profiles/schemas'
import { createProfile } from '~/domain/profiles/profiles'

export default defineApiRoute({
  summary: 'Create an outbound profile',
  description:
    'Body {name, role, goal?, greeting?, capabilities?, voicemail_policy?, max_call_duration_s? (30..3600, default 600)}. ' +
    'voicemail_policy is hang_up, the only policy (an answering machine ends the call; else 400 unsupported_policy). ' +
    'variables is read-only: the distinct {{name}} placeholders of role and greeting (names [a-z_][a-z0-9_]{0,63}), in order of first appearance. ' +
    'capabilities are names from GET /outbound-capabilities (else 400 validation_error, field capabilities). ' +
    'Answers 201 with status draft; POST /profiles/{prf}/build writes its prompt.',
  tags: ['Outbound'],
  scope: 'outbound:write',
  dataRoute: true,
  status: 201,
  params: AgentParams,
  body: CreateProfileBody,
  response: Profile,
  errors: ['invalid_id', 'agent_not_found', 'unsupported_field', 'validation_error', 'unsupported_policy'],
  handler: ({ runtime, principal, account, params, body }) =>
    createProfile(runtime, agentAccount(principal, account), params.agt, body),
})
