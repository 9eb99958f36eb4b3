import { defineApiRoute } from '~/http/define-api-route'
import { UserParams } from '~/domain/users/schemas'
import { LoginLink } from '~/domain/sessions/schemas'
import { issueLoginLink } from '~/domain/sessions/sessions'

export default defineApiRoute({
  summary: 'Issue a one-time dashboard login link',
  description:
    'The token is single-use and valid for 15 minutes; only its hash is stored. Opening `url` shows a page whose button (or `POST /api/auth/login-link`) starts a dashboard session for the user. The master key may name any user; a `partners:manage` key only the users of its partner members, never its own user (403 `forbidden_account`); an OAuth connection never (403 `insufficient_scope`). The session holds at most the scopes and ip_allowlist of the credential that issued the link (the master key: every grantable scope).',
  tags: ['Partners and login'],
  scope: 'users:manage',
  anyScope: ['partners:manage'],
  params: UserParams,
  status: 201,
  response: LoginLink,
  secretResponse: true,
  errors: ['invalid_id', 'not_found'],
  // A partner's link for its member is audited cross_account on the member's account (auditMemberParams).
  handler: ({ runtime, principal, params }) =>
    issueLoginLink(runtime.database, principal, params.usr, runtime.config.publicUrl),
})
