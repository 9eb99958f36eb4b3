import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { Profile, ProfileListQuery } from '~/domain/profiles/schemas'
import { listProfiles } from '~/domain/profiles/profiles'

export default defineApiRoute({
  summary: "List an agent's outbound profiles",
  description: 'Newest first, keyset pages.',
  tags: ['Outbound'],
  scope: 'outbound:read',
  dataRoute: true,
  params: AgentParams,
  query: ProfileListQuery,
  response: v.object({ data: v.array(Profile) }),
  errors: ['invalid_id', 'agent_not_found', 'invalid_limit', 'invalid_cursor', 'unsupported_filter'],
  handler: async ({ runtime, principal, account, params, query, keyset }) => {
    const accountId = agentAccount(principal, account)
    const page = await keyset({
      filters: { agent_id: params.agt },
      sort: '-created_at,-id',
      limit: query.limit,
      cursor: query.cursor,
    })
    return asList(await listProfiles(runtime, accountId, params.agt, page))
  },
})
