import { defineApiRoute } from '~/http/define-api-route'
import { auditCrossAccount } from '~/http/pipeline/audit'
import { User } from '~/domain/users/schemas'
import { MemberParams } from '~/domain/partners/schemas'
import { getMember } from '~/domain/partners/members'

export default defineApiRoute({
  summary: 'Read a partner member',
  description:
    'Only the calling partner’s own members; another partner’s member, an ordinary user or an unknown id is 404 not_found. A suspended member is read here (status suspended), while the partner’s other routes naming its account answer 403 account_suspended. Audited cross_account on the member’s account.',
  tags: ['Partners and login'],
  scope: 'partners:manage',
  params: MemberParams,
  readsSuspendedMembers: true,
  response: User,
  errors: ['invalid_id', 'not_found'],
  handler: async ({ event, runtime, principal, params }) => {
    const member = await getMember(runtime.database, principal, params.usr)
    auditCrossAccount(event, [member.account_id])
    return member
  },
})
