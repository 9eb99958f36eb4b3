import { revokeCredential } from '~/domain/admin/credentials'
import { AdminCredentialParams } from '~/domain/admin/schemas'
import { defineAdminRoute } from '~/http/define-admin-route'

export default defineAdminRoute({
  summary: 'Revoke any API key',
  description:
    'Revokes at once on every instance (the cached principal is dropped through the invalidation bus): the next request with the key is 401 invalid_credentials. Revoking twice is harmless (204). Unknown key → 404 not_found. Recorded in the action log as credential.revoke.',
  params: AdminCredentialParams,
  status: 204,
  errors: ['invalid_id', 'not_found'],
  action: 'credential.revoke',
  handler: ({ runtime, principal, params }) => revokeCredential(runtime.database, principal, params.key),
})
