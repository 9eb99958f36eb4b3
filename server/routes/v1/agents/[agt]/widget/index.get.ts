import { defineApiRoute } from '~/http/define-api-route'
import { publicOrigin } from '~/http/public-origin'
import { AgentParams, Widget } from '~/domain/agents/schemas'
import { agentAccount } from '~/domain/agents/agents'
import { getWidget } from '~/domain/agents/widget'

export default defineApiRoute({
  summary: 'Read the widget',
  description:
    'The only read that shows public_token. public_token and embed_snippet are null until a token is minted.',
  tags: ['Widget and voice'],
  scope: 'agents:read',
  dataRoute: true,
  params: AgentParams,
  response: Widget,
  errors: ['invalid_id', 'agent_not_found'],
  handler: ({ event, runtime, principal, account, params }) =>
    getWidget(runtime.database, publicOrigin(event, runtime.config), agentAccount(principal, account), params.agt),
})
