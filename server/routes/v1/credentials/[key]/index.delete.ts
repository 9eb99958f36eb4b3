import { defineApiRoute } from '~/http/define-api-route'
import { KeyParams } from '~/domain/credentials/schemas'
import { revokeKey } from '~/domain/credentials/keys'
import { refuseOAuthPrincipal } from '~/domain/oauth/guard'

export default defineApiRoute({
  summary: 'Revoke an API key',
  description: 'Revokes at once: the next request with it is 401 invalid_credentials. Revoking twice is harmless.',
  tags: ['Users and credentials'],
  scope: 'credentials:manage',
  params: KeyParams,
  status: 204,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, principal, params }) => {
    refuseOAuthPrincipal(principal, 'revoke API keys')
    return revokeKey(runtime.database, principal, params.key)
  },
})
