import { asList, defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { handleList, listOptions } from '~/http/kb-document-routes'

export default defineApiRoute({
  ...listOptions,
  params: AgentParams,
  handler: async ({ runtime, principal, keyset, account, params, query }) =>
    asList(await handleList(runtime, keyset, agentAccount(principal, account), params.agt, query)),
})
