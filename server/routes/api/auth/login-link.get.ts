import { defineApiRoute } from '../../../utils/define-api-route'
import { signIn } from '../../../utils/define-session-route'
import { redeemLoginLink } from '../../../domain/sessions/sessions'
import { LoginLinkQuery, SessionAnswer } from '../../../domain/sessions/schemas'

export default defineApiRoute({
  summary: 'Open a login link in a browser',
  description: 'The `url` of a login link: redeems `token` as `POST /api/auth/login-link` does and sets the session cookie.',
  tags: ['Dashboard'],
  auth: 'public',
  query: LoginLinkQuery,
  response: SessionAnswer,
  errors: ['invalid_credentials', 'rate_limited', 'validation_error'],
  handler: ({ event, runtime, query }) => signIn(event, runtime, () => redeemLoginLink(runtime.database, query.token)),
})
