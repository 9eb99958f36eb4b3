import { setResponseHeaders } from 'h3'
import { defineApiRoute } from '~/http/define-api-route'
import { invalidLink, LOGIN_LINK_PREFIX } from '~/domain/sessions/sessions'
import { LoginLinkQuery } from '~/domain/sessions/schemas'
import { CONFIRM_PAGE_HEADERS, confirmPage } from '~/http/pages/login-link'
import { isWellFormedToken } from '~/lib/opaque-token'

export default defineApiRoute({
  summary: 'Open a login link in a browser',
  description:
    'The `url` of a login link. Answers an HTML page whose form POSTs the token to `POST /api/auth/login-link`; opening the page does not use the link, so mail scanners and prefetchers cannot spend it. Sent with `Cache-Control: no-store` and `Referrer-Policy: no-referrer`. A malformed token is 401 `invalid_credentials`.',
  tags: ['Dashboard'],
  auth: 'public',
  raw: true,
  query: LoginLinkQuery,
  errors: ['invalid_credentials', 'validation_error'],
  responses: {
    200: {
      description: 'HTML confirm page with a form that POSTs the token',
      content: { 'text/html': { schema: { type: 'string' } } },
    },
    400: {
      description: '`validation_error`: token missing or too long',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    },
    401: {
      description: '`invalid_credentials`: the token is malformed',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    },
  },
  handler({ event, query }) {
    if (!isWellFormedToken(query.token, LOGIN_LINK_PREFIX)) throw invalidLink()
    setResponseHeaders(event, CONFIRM_PAGE_HEADERS)
    return confirmPage(query.token)
  },
})
