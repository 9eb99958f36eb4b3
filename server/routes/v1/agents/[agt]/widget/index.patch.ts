import { defineApiRoute } from '~/http/define-api-route'
import { AgentParams, WidgetPatch, WidgetSettings } from '~/domain/agents/schemas'
import { agentAccount } from '~/domain/agents/agents'
import { patchWidget } from '~/domain/agents/widget'

export default defineApiRoute({
  summary: 'Update the widget',
  description:
    'allowed_domains (replaces the list) and appearance (merges key by key; null clears a key). A token is minted when allowed_domains becomes non-empty. Never bumps agent_version. ' +
    'Answers the settings with has_public_token; the token itself is shown only by GET /agents/{agt}/widget and regenerate-token.',
  tags: ['Widget and voice'],
  scope: 'agents:write',
  dataRoute: true,
  params: AgentParams,
  body: WidgetPatch,
  patch: true,
  response: WidgetSettings,
  errors: ['invalid_id', 'agent_not_found', 'unsupported_field', 'validation_error', 'empty_update'],
  handler: ({ runtime, principal, account, params, body }) =>
    patchWidget(runtime.database, agentAccount(principal, account), params.agt, body),
})
