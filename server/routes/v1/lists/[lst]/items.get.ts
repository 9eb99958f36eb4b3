import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { listAccount, listItems } from '~/domain/contact-lists/lists'
import { ContactItem, ItemListQuery, ListParams } from '~/domain/contact-lists/schemas'

export default defineApiRoute({
  summary: 'List the items of a contact list',
  description:
    'Newest first, keyset pages (limit up to 1000). dnc is true while the number is on the do-not-call list.',
  tags: ['Outbound'],
  scope: 'outbound:read',
  dataRoute: true,
  params: ListParams,
  query: ItemListQuery,
  response: v.object({ data: v.array(ContactItem) }),
  errors: ['invalid_id', 'not_found', 'invalid_limit', 'invalid_cursor', 'unsupported_filter'],
  handler: async ({ runtime, account, params, query, keyset }) => {
    const accountId = listAccount(account)
    const page = await keyset({
      filters: { account_id: accountId, list_id: params.lst },
      sort: '-created_at,-id',
      limit: query.limit,
      cursor: query.cursor,
    })
    return asList(await listItems(runtime, accountId, params.lst, page))
  },
})
