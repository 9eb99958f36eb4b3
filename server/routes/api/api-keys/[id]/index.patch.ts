import { defineSessionRoute } from '~/http/define-session-route'
import { ApiKey, KeyUpdate } from '~/domain/credentials/schemas'
import { updateKey } from '~/domain/credentials/keys'
import { DashboardKeyParams } from '~/domain/sessions/schemas'

export default defineSessionRoute({
  summary: 'Edit one of my API keys',
  description:
    "scopes replace the whole set (same catalogue check as create); expires_in_days (1 to 365) counts from now. At least one is required. The secret never changes; the next request with the key sees the new scopes. A revoked key cannot be edited (400); another user's key is 404.",
  tags: ['Dashboard'],
  params: DashboardKeyParams,
  // Not a `patch` route: the contract answers an empty edit with validation_error, not empty_update.
  body: KeyUpdate,
  response: ApiKey,
  errors: ['invalid_scope', 'invalid_id', 'not_found'],
  handler: ({ runtime, principal, params, body }) => updateKey(runtime.database, principal, params.id, body),
})
