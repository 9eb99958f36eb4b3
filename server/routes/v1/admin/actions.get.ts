import * as v from 'valibot'
import { listActions } from '~/domain/admin/actions'
import { AdminAction, AdminActionQuery } from '~/domain/admin/schemas'
import { asList } from '~/http/define-api-route'
import { defineAdminRoute } from '~/http/define-admin-route'

export default defineAdminRoute({
  summary: 'Read the operator action log',
  description:
    'Every successful write of an /admin route, newest first (keyset on created_at, id): what was done, to which id, with which parameters (secrets left out), and the request id. Filter by action or target.',
  query: AdminActionQuery,
  response: v.object({ data: v.array(AdminAction) }),
  errors: ['invalid_limit', 'invalid_cursor'],
  async handler({ runtime, keyset, query }) {
    const { cursor, limit, ...filters } = query
    const page = await keyset({ filters, sort: '-created_at', limit, cursor })
    return asList(await listActions(runtime.database, filters, page))
  },
})
