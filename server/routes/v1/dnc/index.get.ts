import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { dncAccount, listDnc } from '~/domain/dnc/entries'
import { DncEntry, DncListQuery } from '~/domain/dnc/schemas'

export default defineApiRoute({
  summary: 'List the do-not-call list',
  description:
    "The account's do-not-call entries, newest first, keyset pages. phone (E.164; 400 invalid_phone otherwise) keeps the entry for that number.",
  tags: ['Outbound'],
  scope: 'outbound:read',
  dataRoute: true,
  query: DncListQuery,
  response: v.object({ data: v.array(DncEntry) }),
  errors: ['invalid_phone', 'invalid_limit', 'invalid_cursor', 'unsupported_filter'],
  handler: async ({ runtime, account, query, keyset }) => {
    const accountId = dncAccount(account)
    const page = await keyset({
      filters: { account_id: accountId, phone: query.phone ?? null },
      sort: '-created_at,-id',
      limit: query.limit,
      cursor: query.cursor,
    })
    return asList(await listDnc(runtime, accountId, { phone: query.phone }, page))
  },
})
