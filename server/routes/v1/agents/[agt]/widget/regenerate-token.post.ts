import { defineApiRoute } from '~/http/define-api-route'
import { publicOrigin } from '~/http/public-origin'
import { AgentParams, Widget } from '~/domain/agents/schemas'
import { agentAccount } from '~/domain/agents/agents'
import { regenerateWidgetToken } from '~/domain/agents/widget'

export default defineApiRoute({
  summary: 'Regenerate the widget token',
  description: 'Mints a new public token; the old one stops working at once. Answers the Widget with the new token.',
  tags: ['Widget and voice'],
  scope: 'agents:admin',
  dataRoute: true,
  params: AgentParams,
  response: Widget,
  secretResponse: true,
  errors: ['invalid_id', 'agent_not_found', 'unsupported_field'],
  handler: ({ event, runtime, principal, account, params }) =>
    regenerateWidgetToken(
      runtime.database,
      publicOrigin(event, runtime.config),
      agentAccount(principal, account),
      params.agt,
    ),
})
