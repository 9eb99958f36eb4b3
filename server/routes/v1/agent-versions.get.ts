import * as v from 'valibot'
import { getHeader } from 'h3'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { AgentVersionMarker, AgentVersionsQuery } from '~/domain/agents/schemas'
import { listAgentVersions, markerAccounts } from '~/domain/agents/prompts'

export default defineApiRoute({
  summary: 'List deploy markers',
  description:
    'One marker per agent_version (build, patch, prompt deploy or restore, voice patch), newest first, keyset on (deployed_at, id). account_id (repeatable) is required unless the credential covers one account; from and to bound deployed_at ([from, to)).',
  tags: ['Prompts'],
  scope: 'agents:read',
  dataRoute: true,
  query: AgentVersionsQuery,
  repeatable: ['account_id'],
  response: v.object({ data: v.array(AgentVersionMarker) }),
  errors: [
    'invalid_id',
    'invalid_date',
    'invalid_date_range',
    'invalid_limit',
    'invalid_cursor',
    'unsupported_filter',
    'validation_error',
  ],
  async handler({ event, runtime, principal, keyset, account, query }) {
    const { cursor, limit, account_id, ...filters } = query
    const accountIds = markerAccounts(principal, account, account_id, !!getHeader(event, 'x-svc-account'))
    const page = await keyset({
      filters: { ...filters, account_id: accountIds },
      sort: '-deployed_at',
      limit,
      cursor,
    })
    return asList(await listAgentVersions(runtime.database, accountIds, filters, page))
  },
})
