import { defineApiRoute } from '~/http/define-api-route'
import { audited, signIn } from '~/http/define-session-route'
import { login } from '~/domain/sessions/sessions'
import { LoginBody, SessionAnswer } from '~/domain/sessions/schemas'

export default audited(
  defineApiRoute({
    summary: 'Log in to the dashboard',
    description:
      'E-mail (case-insensitive) and password. Answers a 12-hour session token and sets it as the `svc_session` cookie (HttpOnly, SameSite=Lax, Secure outside localhost). A wrong e-mail or password is 401 `invalid_credentials` with one message; failures count against the per-IP limit of 20 per minute, past which every attempt is 429 `rate_limited`. Audited (credential_type `session` once signed in).',
    tags: ['Dashboard'],
    auth: 'public',
    body: LoginBody,
    response: SessionAnswer,
    errors: ['invalid_credentials', 'rate_limited'],
    handler: ({ event, runtime, body }) =>
      signIn(event, runtime, () => login(runtime.database, body.email, body.password)),
  }),
)
