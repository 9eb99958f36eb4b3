import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { listLists } from '~/domain/contact-lists/lists'
import { ContactList, ListListQuery } from '~/domain/contact-lists/schemas'

export default defineApiRoute({
  summary: 'List contact lists',
  description: "The agent's contact lists, newest first, keyset pages.",
  tags: ['Outbound'],
  scope: 'outbound:read',
  dataRoute: true,
  params: AgentParams,
  query: ListListQuery,
  response: v.object({ data: v.array(ContactList) }),
  errors: ['invalid_id', 'agent_not_found', 'invalid_limit', 'invalid_cursor', 'unsupported_filter'],
  handler: async ({ runtime, principal, account, params, query, keyset }) => {
    const accountId = agentAccount(principal, account)
    const page = await keyset({
      filters: { account_id: accountId, agent_id: params.agt },
      sort: '-created_at,-id',
      limit: query.limit,
      cursor: query.cursor,
    })
    return asList(await listLists(runtime, accountId, params.agt, page))
  },
})
