import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { ApiKey, CredentialListQuery } from '~/domain/credentials/schemas'
import { assertOwnUser, listKeys } from '~/domain/credentials/keys'

export default defineApiRoute({
  summary: 'List API keys',
  description:
    'The master key sees every key (or one user with user_id); a personal key sees its own user and may only name it.',
  tags: ['Users and credentials'],
  scope: 'credentials:manage',
  query: CredentialListQuery,
  response: v.object({ data: v.array(ApiKey) }),
  errors: ['invalid_id', 'invalid_limit', 'invalid_cursor'],
  async handler({ event, runtime, principal, keyset, query }) {
    const named = query.user_id?.replace(/^acc_/, 'usr_')
    if (named) assertOwnUser(principal, named)
    const userId = named ?? (principal.type === 'master' ? null : principal.userId)
    const page = await keyset({
      filters: { user_id: userId },
      sort: '-created_at',
      limit: query.limit,
      cursor: query.cursor,
    })
    return asList(await listKeys(runtime.database, userId, page))
  },
})
