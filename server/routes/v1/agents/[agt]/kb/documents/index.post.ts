import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { createOptions, handleCreate } from '~/http/kb-document-routes'

export default defineApiRoute({
  ...createOptions,
  params: AgentParams,
  handler: ({ runtime, principal, account, params, body, parts }) =>
    handleCreate(runtime, agentAccount(principal, account), params.agt, body, parts),
})
