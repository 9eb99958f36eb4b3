import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { dncAccount } from '~/domain/dnc/entries'
import { listCalls } from '~/domain/calls/calls'
import { CallListQuery, CallResource } from '~/domain/calls/outbound-schemas'

export default defineApiRoute({
  summary: 'List outbound calls',
  description:
    "The account's calls, newest first, keyset pages. Filters: status, agent_id, campaign_id, from and to (E.164 numbers; 400 invalid_phone otherwise).",
  tags: ['Outbound'],
  scope: 'outbound:read',
  dataRoute: true,
  query: CallListQuery,
  response: v.object({ data: v.array(CallResource) }),
  errors: ['invalid_phone', 'invalid_id', 'invalid_limit', 'invalid_cursor', 'unsupported_filter'],
  handler: async ({ runtime, account, query, keyset }) => {
    const accountId = dncAccount(account)
    const page = await keyset({
      filters: {
        account_id: accountId,
        status: query.status ?? null,
        agent_id: query.agent_id ?? null,
        campaign_id: query.campaign_id ?? null,
        from: query.from ?? null,
        to: query.to ?? null,
      },
      sort: '-created_at,-id',
      limit: query.limit,
      cursor: query.cursor,
    })
    return asList(await listCalls(runtime.database.db, accountId, query, page))
  },
})
