import { inspectCredential } from '~/domain/admin/credentials'
import { AdminCredential, AdminCredentialParams } from '~/domain/admin/schemas'
import { defineAdminRoute } from '~/http/define-admin-route'

export default defineAdminRoute({
  summary: 'Inspect any API key',
  description:
    'Any key of any user (personal, dashboard or OAuth connection key): the ApiKey shape without its secret, its source and revocation time, its user and the accounts it may act for. Unknown key → 404 not_found.',
  params: AdminCredentialParams,
  response: AdminCredential,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, params }) => inspectCredential(runtime.database, params.key),
})
