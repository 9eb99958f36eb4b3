import { defineApiRoute } from '../../../utils/define-api-route'
import { signIn } from '../../../utils/define-session-route'
import { redeemLoginLink } from '../../../domain/sessions/sessions'
import { LoginLinkBody, SessionAnswer } from '../../../domain/sessions/schemas'

export default defineApiRoute({
  summary: 'Redeem a login link',
  description: 'Exchanges a one-time token from `POST /v1/users/{usr}/login-links` for a dashboard session, answered and set as a cookie as by login. A used, expired or unknown token is 401 `invalid_credentials`.',
  tags: ['Dashboard'],
  auth: 'public',
  body: LoginLinkBody,
  response: SessionAnswer,
  errors: ['invalid_credentials', 'rate_limited'],
  handler: ({ event, runtime, body }) => signIn(event, runtime, () => redeemLoginLink(runtime.database, body.token)),
})
