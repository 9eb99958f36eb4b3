import { asList, defineApiRoute } from '~/http/define-api-route'
import { User, UserListQuery } from '~/domain/users/schemas'
import { listUsers } from '~/domain/users/users'
import * as v from 'valibot'

export default defineApiRoute({
  summary: 'List tenant users',
  description: 'Newest first, keyset on (created_at, id). The cursor is bound to the filters, limit and credential.',
  tags: ['Users and credentials'],
  scope: 'users:manage',
  query: UserListQuery,
  response: v.object({ data: v.array(User) }),
  errors: ['invalid_date', 'invalid_limit', 'invalid_cursor'],
  async handler({ event, runtime, principal, keyset, query }) {
    const { cursor, limit, ...filters } = query
    const page = await keyset({
      filters,
      sort: '-created_at',
      limit,
      cursor,
    })
    return asList(await listUsers(runtime.database, filters, page))
  },
})
