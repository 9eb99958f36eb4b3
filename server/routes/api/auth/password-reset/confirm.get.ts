import { setResponseHeaders } from 'h3'
import { defineApiRoute } from '~/http/define-api-route'
import { CONFIRM_PAGE_HEADERS } from '~/http/pages/login-link'
import { resetPage } from '~/http/pages/password-reset'
import { PasswordResetPageQuery } from '~/domain/users/schemas'
import { invalidResetToken, RESET_PREFIX } from '~/domain/users/password-reset'
import { isWellFormedToken } from '~/lib/opaque-token'

export default defineApiRoute({
  summary: 'Open a password-reset link in a browser',
  description:
    'The link that `POST /api/auth/password-reset` mails. Answers an HTML page whose form POSTs the token with the new password to `POST /api/auth/password-reset/confirm`; opening the page does not spend the link. Sent with `Cache-Control: no-store` and `Referrer-Policy: no-referrer`. A malformed token is 400 `invalid_token`.',
  tags: ['Dashboard'],
  auth: 'public',
  raw: true,
  query: PasswordResetPageQuery,
  errors: ['invalid_token', 'validation_error'],
  responses: {
    200: {
      description: 'HTML page with a form that POSTs the token and the new password',
      content: { 'text/html': { schema: { type: 'string' } } },
    },
    400: {
      description: '`invalid_token`: the token is malformed; `validation_error`: token missing or too long',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    },
  },
  handler({ event, query }) {
    if (!isWellFormedToken(query.token, RESET_PREFIX)) throw invalidResetToken()
    setResponseHeaders(event, CONFIRM_PAGE_HEADERS)
    return resetPage(query.token)
  },
})
