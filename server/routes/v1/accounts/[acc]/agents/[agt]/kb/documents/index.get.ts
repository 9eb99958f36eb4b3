import { asList, defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AccountAgentParams } from '~/domain/agents/schemas'
import { handleList, listOptions } from '~/http/kb-document-routes'

export default defineApiRoute({
  ...listOptions,
  summary: 'List knowledge documents (account alias)',
  description: `Alias of GET /agents/{agt}/kb/documents; the agent must belong to {acc}. ${listOptions.description}`,
  params: AccountAgentParams,
  handler: async ({ runtime, principal, keyset, account, params, query }) =>
    asList(await handleList(runtime, keyset, agentAccount(principal, account, params.acc), params.agt, query)),
})
