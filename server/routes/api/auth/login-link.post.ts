import { getHeader } from 'h3'
import { defineApiRoute } from '~/http/define-api-route'
import { audited, signIn } from '~/http/define-session-route'
import { Errors, apiError } from '~/lib/errors'
import { redeemLoginLink } from '~/domain/sessions/sessions'
import { LoginLinkBody, SessionAnswer } from '~/domain/sessions/schemas'

export default audited(
  defineApiRoute({
    summary: 'Redeem a login link',
    description:
      'Exchanges a one-time token from `POST /v1/users/{usr}/login-links` for a dashboard session, answered and set as a cookie as by login. JSON `{token}`, or the `multipart/form-data` form of the page the link opens. The session holds at most the scopes and ip_allowlist of the credential that issued the link. A used, expired or unknown token is 401 `invalid_credentials`. Audited.',
    tags: ['Dashboard'],
    auth: 'public',
    body: LoginLinkBody,
    multipart: true,
    multipartBody: LoginLinkBody,
    response: SessionAnswer,
    errors: ['invalid_credentials', 'rate_limited', 'forbidden'],
    handler: ({ event, runtime, body, parts }) => {
      let token = body?.token
      if (parts) {
        // The confirm page's form. A form posted from another site would sign the browser in to someone
        // else's dashboard (login CSRF): browsers say where a form came from.
        if (getHeader(event, 'sec-fetch-site') === 'cross-site')
          throw apiError('forbidden', 'The login form must be submitted from this site.')
        const field = parts.find((p) => p.name === 'token' && p.filename === undefined)
        if (!field || field.data.length > 128) throw Errors.validation('token', 'token is required.')
        token = field.data.toString('utf8')
      }
      return signIn(event, runtime, () => redeemLoginLink(runtime.database, token ?? ''))
    },
  }),
)
