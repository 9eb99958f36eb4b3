import { defineApiRoute } from '../../../../utils/define-api-route'
import { UserParams } from '../../../../domain/users/schemas'
import { LoginLink } from '../../../../domain/sessions/schemas'
import { issueLoginLink } from '../../../../domain/sessions/sessions'

export default defineApiRoute({
  summary: 'Issue a one-time dashboard login link',
  description: 'The token is single-use and valid for 15 minutes; only its hash is stored. Opening `url` (or `POST /api/auth/login-link`) starts a dashboard session for the user. A personal key may only name its own user.',
  tags: ['Partners and login'],
  scope: 'users:manage',
  anyScope: ['partners:manage'],
  params: UserParams,
  status: 201,
  response: LoginLink,
  secretResponse: true,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, principal, params }) => issueLoginLink(runtime.database, principal, params.usr, runtime.config.publicUrl),
})
