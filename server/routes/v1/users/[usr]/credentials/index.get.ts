import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { UserParams } from '~/domain/users/schemas'
import { ApiKey, KeyListQuery } from '~/domain/credentials/schemas'
import { assertOwnUser, listKeys } from '~/domain/credentials/keys'

export default defineApiRoute({
  summary: "List a user's API keys",
  description: 'Without secrets; newest first.',
  tags: ['Users and credentials'],
  scope: 'users:manage',
  anyScope: ['credentials:manage'],
  params: UserParams,
  query: KeyListQuery,
  response: v.object({ data: v.array(ApiKey) }),
  errors: ['invalid_id', 'invalid_limit', 'invalid_cursor'],
  async handler({ event, runtime, principal, keyset, params, query }) {
    assertOwnUser(principal, params.usr)
    const page = await keyset({
      filters: { user: params.usr },
      sort: '-created_at',
      limit: query.limit,
      cursor: query.cursor,
    })
    return asList(await listKeys(runtime.database, params.usr, page))
  },
})
