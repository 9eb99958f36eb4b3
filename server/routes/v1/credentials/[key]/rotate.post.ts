import { defineApiRoute } from '~/http/define-api-route'
import { ApiKey, KeyParams } from '~/domain/credentials/schemas'
import { rotateKey } from '~/domain/credentials/keys'
import { refuseOAuthPrincipal } from '~/domain/oauth/guard'

export default defineApiRoute({
  summary: 'Rotate an API key',
  description:
    'Mints a successor with the same scopes, account_ids and ip_allowlist; its secret appears only here. The predecessor keeps working until grace_expires_at (7 days, or its own earlier expiry), then a sweep revokes it. A revoked key cannot be rotated (400).',
  tags: ['Users and credentials'],
  scope: 'credentials:manage',
  params: KeyParams,
  status: 201,
  response: ApiKey,
  secretResponse: true,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, principal, params }) => {
    refuseOAuthPrincipal(principal, 'rotate API keys')
    return rotateKey(runtime.database, principal, params.key)
  },
})
