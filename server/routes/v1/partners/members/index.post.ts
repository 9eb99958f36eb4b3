import { defineApiRoute } from '~/http/define-api-route'
import { auditCrossAccount } from '~/http/pipeline/audit'
import { User } from '~/domain/users/schemas'
import { MemberCreate } from '~/domain/partners/schemas'
import { createMember } from '~/domain/partners/members'

export default defineApiRoute({
  summary: 'Create a partner member',
  description:
    'Creates the member’s user, account and subscription in one transaction, with partner_id the calling partner’s usr_. Needs a personal key with partners:manage (the master key holds no such scope: 403 insufficient_scope; it creates tenants with POST /users). The partner’s keys reach the member’s account from the next request on. Audited cross_account on the member’s account. A partner creates at most 50 members a day (UTC), then 429 quota_exceeded with Retry-After.',
  tags: ['Partners and login'],
  scope: 'partners:manage',
  body: MemberCreate,
  response: User,
  status: 201,
  errors: ['invalid_email', 'email_exists', 'quota_exceeded'],
  handler: async ({ event, runtime, principal, body }) => {
    const member = await createMember(runtime.database, principal, body)
    auditCrossAccount(event, [member.account_id])
    return member
  },
})
