import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { listSyncs } from '~/domain/kb/sync'
import { KbSync, SyncListQuery } from '~/domain/kb/sync-schemas'

export default defineApiRoute({
  summary: 'List the knowledge syncs of an agent',
  description: "The agent's knowledge syncs, manual and scheduled, newest first, keyset pages.",
  tags: ['Knowledge base'],
  scope: 'kb:read',
  dataRoute: true,
  params: AgentParams,
  query: SyncListQuery,
  response: v.object({ data: v.array(KbSync) }),
  errors: ['invalid_id', 'agent_not_found', 'invalid_limit', 'invalid_cursor', 'unsupported_filter'],
  handler: async ({ runtime, principal, account, params, query, keyset }) => {
    const accountId = agentAccount(principal, account)
    const page = await keyset({
      filters: { account_id: accountId, agent_id: params.agt },
      sort: '-started_at,-id',
      limit: query.limit,
      cursor: query.cursor,
    })
    return asList(await listSyncs(runtime.database.db, accountId, params.agt, page))
  },
})
