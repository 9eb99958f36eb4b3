import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { listRuns } from '~/domain/agent-tests/runs'
import { TestListQuery, TestRunSummary } from '~/domain/agent-tests/schemas'

export default defineApiRoute({
  summary: 'List the test runs of an agent',
  description: "The agent's test runs, newest first, keyset pages; without results (read GET /test-runs/{run}).",
  tags: ['Agent tests'],
  scope: 'agents:read',
  dataRoute: true,
  params: AgentParams,
  query: TestListQuery,
  response: v.object({ data: v.array(TestRunSummary) }),
  errors: ['invalid_id', 'agent_not_found', 'invalid_limit', 'invalid_cursor', 'unsupported_filter'],
  handler: async ({ runtime, principal, account, params, query, keyset }) => {
    const accountId = agentAccount(principal, account)
    const page = await keyset({
      filters: { account_id: accountId, agent_id: params.agt },
      sort: '-created_at,-id',
      limit: query.limit,
      cursor: query.cursor,
    })
    return asList(await listRuns(runtime, accountId, params.agt, page))
  },
})
