import { defineApiRoute } from '~/http/define-api-route'
import { UserParams } from '~/domain/users/schemas'
import { ApiKey, KeyCreate } from '~/domain/credentials/schemas'
import { createKey } from '~/domain/credentials/keys'
import { refuseOAuthPrincipal } from '~/domain/oauth/guard'
import { Errors } from '~/lib/errors'

export default defineApiRoute({
  summary: 'Issue a personal API key',
  description:
    'The secret (svc_sk_live_…) appears only in this response. A personal key with credentials:manage may issue keys for its own user only, with scopes it holds; extra account_ids need the master key. A partners:manage key may issue keys for the users of its partner members (scopes it holds, never partners:manage; their own account only); any other user is 403 forbidden_account.',
  tags: ['Users and credentials'],
  scope: 'users:manage',
  anyScope: ['credentials:manage', 'partners:manage'],
  params: UserParams,
  body: KeyCreate,
  status: 201,
  response: ApiKey,
  secretResponse: true,
  errors: ['invalid_scope', 'invalid_id', 'not_found'],
  handler: ({ runtime, principal, params, body }) => {
    refuseOAuthPrincipal(principal, 'issue API keys')
    // partners:manage reaches members only: the key's own user still needs credentials:manage.
    if (principal.type !== 'master' && principal.userId === params.usr && !principal.scopes.has('credentials:manage'))
      throw Errors.insufficientScope('credentials:manage')
    // A partner's key for its member is audited cross_account on the member's account (auditMemberParams).
    return createKey(runtime.database, principal, params.usr, body)
  },
})
