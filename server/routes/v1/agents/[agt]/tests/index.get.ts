import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { listTests } from '~/domain/agent-tests/tests'
import { AgentTest, TestListQuery } from '~/domain/agent-tests/schemas'

export default defineApiRoute({
  summary: 'List the tests of an agent',
  description: "The agent's tests, newest first, keyset pages.",
  tags: ['Agent tests'],
  scope: 'agents:read',
  dataRoute: true,
  params: AgentParams,
  query: TestListQuery,
  response: v.object({ data: v.array(AgentTest) }),
  errors: ['invalid_id', 'agent_not_found', 'invalid_limit', 'invalid_cursor', 'unsupported_filter'],
  handler: async ({ runtime, principal, account, params, query, keyset }) => {
    const accountId = agentAccount(principal, account)
    const page = await keyset({
      filters: { account_id: accountId, agent_id: params.agt },
      sort: '-created_at,-id',
      limit: query.limit,
      cursor: query.cursor,
    })
    return asList(await listTests(runtime, accountId, params.agt, page))
  },
})
