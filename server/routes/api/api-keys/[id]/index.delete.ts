import { defineSessionRoute } from '~/http/define-session-route'
import { revokeKey } from '~/domain/credentials/keys'
import { DashboardKeyParams } from '~/domain/sessions/schemas'

export default defineSessionRoute({
  summary: 'Revoke one of my API keys',
  description: "Revokes at once; revoking twice is harmless. Another user's key is 404.",
  tags: ['Dashboard'],
  params: DashboardKeyParams,
  status: 204,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, principal, params }) => revokeKey(runtime.database, principal, params.id),
})
