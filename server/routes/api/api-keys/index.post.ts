import { defineSessionRoute } from '~/http/define-session-route'
import { ApiKey } from '~/domain/credentials/schemas'
import { createKey } from '~/domain/credentials/keys'
import { DashboardKeyCreate } from '~/domain/sessions/schemas'

export default defineSessionRoute({
  summary: 'Create a personal API key',
  description:
    'A personal live key for the logged-in user and its home account; the secret appears only in this response. account_id, account_ids and user_id are accepted and ignored. Master-only scopes are 400 `invalid_scope`.',
  tags: ['Dashboard'],
  body: DashboardKeyCreate,
  status: 201,
  response: ApiKey,
  errors: ['invalid_scope'],
  handler: ({ runtime, principal, session, body }) =>
    createKey(runtime.database, principal, session.userId, body, 'dashboard'),
})
