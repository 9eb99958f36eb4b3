import { defineSessionRoute } from '~/http/define-session-route'
import { ApiKey } from '~/domain/credentials/schemas'
import { rotateKey } from '~/domain/credentials/keys'
import { DashboardKeyParams } from '~/domain/sessions/schemas'

export default defineSessionRoute({
  summary: 'Rotate one of my API keys',
  description:
    "Mints a successor with the same scopes, account_ids and ip_allowlist (secret shown once); the predecessor works until grace_expires_at. A revoked key cannot be rotated (400); another user's key is 404.",
  tags: ['Dashboard'],
  params: DashboardKeyParams,
  status: 201,
  response: ApiKey,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, principal, params }) => rotateKey(runtime.database, principal, params.id),
})
