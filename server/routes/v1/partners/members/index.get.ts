import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { auditCrossAccount } from '~/http/pipeline/audit'
import { User } from '~/domain/users/schemas'
import { MemberListQuery } from '~/domain/partners/schemas'
import { listMembers } from '~/domain/partners/members'

export default defineApiRoute({
  summary: 'List partner members',
  description:
    'The calling partner’s members only, newest first, keyset on (created_at, id). The cursor is bound to the limit and credential. Audited cross_account on the listed members’ accounts.',
  tags: ['Partners and login'],
  scope: 'partners:manage',
  query: MemberListQuery,
  response: v.object({ data: v.array(User) }),
  errors: ['invalid_limit', 'invalid_cursor'],
  async handler({ event, runtime, principal, keyset, query }) {
    const { cursor, limit } = query
    const page = await keyset({ filters: {}, sort: '-created_at', limit, cursor })
    const result = await listMembers(runtime.database, principal, page)
    if (result.data.length)
      auditCrossAccount(
        event,
        result.data.map((m) => m.account_id),
      )
    return asList(result)
  },
})
