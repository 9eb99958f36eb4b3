import * as v from 'valibot'
import { listAdminAgents } from '~/domain/admin/agents'
import { AdminAgent, AdminAgentQuery } from '~/domain/admin/schemas'
import { asList } from '~/http/define-api-route'
import { defineAdminRoute } from '~/http/define-admin-route'

export default defineAdminRoute({
  summary: 'List agents across accounts',
  description:
    'Every account’s agents, newest first (keyset on created_at, id), with the owning account’s name and status and whether the operator paused the agent. Filters: account_id, paused (true|false), q (name or website contains, or the exact agt_ id).',
  query: AdminAgentQuery,
  response: v.object({ data: v.array(AdminAgent) }),
  errors: ['invalid_limit', 'invalid_cursor'],
  async handler({ runtime, keyset, query }) {
    const { cursor, limit, ...filters } = query
    const page = await keyset({ filters, sort: '-created_at', limit, cursor })
    return asList(await listAdminAgents(runtime.database, filters, page))
  },
})
