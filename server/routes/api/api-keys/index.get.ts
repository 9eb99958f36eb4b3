import * as v from 'valibot'
import { asList } from '~/http/define-api-route'
import { defineSessionRoute } from '~/http/define-session-route'
import { ApiKey } from '~/domain/credentials/schemas'
import { listKeys } from '~/domain/credentials/keys'
import { DashboardKeyListQuery } from '~/domain/sessions/schemas'

export default defineSessionRoute({
  summary: 'List my API keys',
  description: 'Every key of the logged-in user, newest first, whoever issued it; never the secrets.',
  tags: ['Dashboard'],
  query: DashboardKeyListQuery,
  response: v.object({ data: v.array(ApiKey) }),
  errors: ['invalid_limit', 'invalid_cursor'],
  async handler({ event, runtime, principal, keyset, session, query }) {
    const page = await keyset({
      filters: { user_id: session.userId },
      sort: '-created_at',
      limit: query.limit,
      cursor: query.cursor,
    })
    return asList(await listKeys(runtime.database, session.userId, page))
  },
})
