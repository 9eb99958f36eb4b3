import { defineApiRoute } from '~/http/define-api-route'
import { audited, clearSessionCookie, sessionToken, type AuditedSession } from '~/http/define-session-route'
import { revokeSession } from '~/domain/sessions/sessions'

export default audited(
  defineApiRoute({
    summary: 'Log out of the dashboard',
    description:
      'Revokes the session named by the `svc_session` cookie or `Authorization: Session <token>` and clears the cookie. Logging out without a session, or twice, is harmless. Audited.',
    tags: ['Dashboard'],
    auth: 'public',
    status: 204,
    errors: ['invalid_credentials'],
    async handler({ event, runtime }) {
      const token = sessionToken(event)
      const revoked = token ? await revokeSession(runtime.database, token) : null
      if (revoked) event.context.dashboardSession = revoked satisfies AuditedSession
      clearSessionCookie(event)
    },
  }),
)
