import { setResponseHeaders, setResponseStatus } from 'h3'
import { defineApiRoute } from '~/http/define-api-route'
import { audited, auditDashboardAccount } from '~/http/define-session-route'
import { CONFIRM_PAGE_HEADERS } from '~/http/pages/login-link'
import { resetDonePage } from '~/http/pages/password-reset'
import { underFailureLimit } from '~/http/pipeline/guards'
import { formFields, parseWith } from '~/http/pipeline/parse'
import { PasswordResetConfirm } from '~/domain/users/schemas'
import { confirmPasswordReset } from '~/domain/users/password-reset'

const ErrorBody = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } }

export default audited(
  defineApiRoute({
    summary: 'Set a new password with a reset link',
    description:
      'JSON `{token, password}` (at least 12 characters), or the `multipart/form-data` form of the page the link opens (answered with an HTML page). Sets the password and ends every dashboard session of the user: 204. The token works once; a used, expired or unknown token is 400 `invalid_token`, and counts against the per-IP limit of 20 failed attempts a minute (then 429). Audited.',
    tags: ['Dashboard'],
    auth: 'public',
    raw: true,
    body: PasswordResetConfirm,
    multipart: true,
    multipartBody: PasswordResetConfirm,
    errors: ['invalid_token', 'validation_error', 'rate_limited'],
    responses: {
      204: { description: 'The password is set; every dashboard session of the user has ended' },
      200: {
        description: 'The same, for the form of the page',
        content: { 'text/html': { schema: { type: 'string' } } },
      },
      400: {
        description: '`invalid_token`, `validation_error` (field password: under 12 characters), `unsupported_field`',
        content: ErrorBody,
      },
      429: {
        description: '`rate_limited`: too many failed attempts from this IP; see Retry-After',
        content: ErrorBody,
      },
    },
    async handler({ event, runtime, body, parts }) {
      // The page's form: its fields go through the same schema as the JSON body.
      const input = parts ? parseWith(PasswordResetConfirm, formFields(parts), 'body') : body
      const { accountId } = await underFailureLimit(
        event,
        runtime,
        () => confirmPasswordReset(runtime.database, input.token, input.password),
        (e) => e.code === 'invalid_token',
      )
      auditDashboardAccount(event, accountId)
      if (parts) {
        setResponseHeaders(event, CONFIRM_PAGE_HEADERS)
        return resetDonePage()
      }
      setResponseStatus(event, 204)
      return null
    },
  }),
)
