import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AccountAgentParams } from '~/domain/agents/schemas'
import { createOptions, handleCreate } from '~/http/kb-document-routes'

export default defineApiRoute({
  ...createOptions,
  summary: 'Add a knowledge document (account alias)',
  description: `Alias of POST /agents/{agt}/kb/documents; the agent must belong to {acc}. ${createOptions.description}`,
  params: AccountAgentParams,
  handler: ({ runtime, principal, account, params, body, parts }) =>
    handleCreate(runtime, agentAccount(principal, account, params.acc), params.agt, body, parts),
})
