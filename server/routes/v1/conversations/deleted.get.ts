import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { DeletedQuery, Tombstone } from '~/domain/conversations/schemas'
import { listDeleted } from '~/domain/conversations/delete'

// A static segment: the router matches it before /conversations/{conv}.
export default defineApiRoute({
  summary: 'List deleted conversations (tombstones)',
  description:
    'Tombstones {conversation_id, account_id, deleted_at, reason} of soft-deleted conversations (reason api or retention), newest first on (deleted_at, id); since filters on deleted_at (inclusive).',
  tags: ['Conversations'],
  scope: 'conversations:read',
  dataRoute: true,
  query: DeletedQuery,
  repeatable: ['account_id'],
  response: v.object({ data: v.array(Tombstone) }),
  errors: ['invalid_date', 'invalid_cursor', 'invalid_limit', 'invalid_id'],
  async handler({ event, runtime, principal, keyset, account, query }) {
    const { cursor, limit, ...filters } = query
    const page = await keyset({
      filters: { ...filters, account_ids: account.ids },
      sort: '-deleted_at',
      limit,
      cursor,
    })
    return asList(await listDeleted(runtime.database, account.ids, query, page))
  },
})
