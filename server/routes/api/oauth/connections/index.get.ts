import * as v from 'valibot'
import { asList } from '~/http/define-api-route'
import { defineSessionRoute } from '~/http/define-session-route'
import { listConnections } from '~/domain/oauth/connections'
import { Connection } from '~/domain/oauth/schemas'
import { DashboardKeyListQuery } from '~/domain/sessions/schemas'

export default defineSessionRoute({
  summary: 'List my OAuth connections',
  description:
    'Assistant connections the logged-in user approved and has not disconnected, newest first: the client, its redirect hosts, the approved scopes and the personal key minted for it.',
  tags: ['Dashboard'],
  query: DashboardKeyListQuery,
  response: v.object({ data: v.array(Connection) }),
  errors: ['invalid_limit', 'invalid_cursor'],
  async handler({ event, runtime, principal, keyset, session, query }) {
    const page = await keyset({
      filters: { user_id: session.userId },
      sort: '-created_at',
      limit: query.limit,
      cursor: query.cursor,
    })
    return asList(await listConnections(runtime.database, session.userId, page))
  },
})
