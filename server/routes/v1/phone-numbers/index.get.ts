import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { NumberListQuery, PhoneNumber } from '~/domain/phone-numbers/schemas'
import { listNumbers, numberAccount } from '~/domain/phone-numbers/numbers'

export default defineApiRoute({
  summary: 'List phone numbers',
  description:
    "The account's phone numbers, newest first, keyset pages; agent_id keeps the numbers assigned to that agent.",
  tags: ['Phone agents'],
  scope: 'agents:read',
  dataRoute: true,
  query: NumberListQuery,
  response: v.object({ data: v.array(PhoneNumber) }),
  errors: ['invalid_id', 'invalid_limit', 'invalid_cursor', 'unsupported_filter'],
  handler: async ({ runtime, account, query, keyset }) => {
    const accountId = numberAccount(account)
    const page = await keyset({
      filters: { account_id: accountId, agent_id: query.agent_id ?? null },
      sort: '-created_at,-id',
      limit: query.limit,
      cursor: query.cursor,
    })
    return asList(await listNumbers(runtime, accountId, { agentId: query.agent_id }, page))
  },
})
