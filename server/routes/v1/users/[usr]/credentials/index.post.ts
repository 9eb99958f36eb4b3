import { defineApiRoute } from '~/http/define-api-route'
import { UserParams } from '~/domain/users/schemas'
import { ApiKey, KeyCreate } from '~/domain/credentials/schemas'
import { createKey } from '~/domain/credentials/keys'
import { refuseOAuthPrincipal } from '~/domain/oauth/guard'

export default defineApiRoute({
  summary: 'Issue a personal API key',
  description:
    'The secret (svc_sk_live_…) appears only in this response. A personal key with credentials:manage may issue keys for its own user only, with scopes it holds; extra account_ids need the master key.',
  tags: ['Users and credentials'],
  scope: 'users:manage',
  anyScope: ['credentials:manage'],
  params: UserParams,
  body: KeyCreate,
  status: 201,
  response: ApiKey,
  secretResponse: true,
  errors: ['invalid_scope', 'invalid_id', 'not_found'],
  handler: ({ runtime, principal, params, body }) => {
    refuseOAuthPrincipal(principal, 'issue API keys')
    return createKey(runtime.database, principal, params.usr, body)
  },
})
