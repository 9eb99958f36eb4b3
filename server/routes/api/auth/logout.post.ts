import { defineApiRoute } from '../../../utils/define-api-route'
import { clearSessionCookie, sessionToken } from '../../../utils/define-session-route'
import { revokeSession } from '../../../domain/sessions/sessions'

export default defineApiRoute({
  summary: 'Log out of the dashboard',
  description: 'Revokes the session named by the `svc_session` cookie or `Authorization: Session <token>` and clears the cookie. Logging out without a session, or twice, is harmless.',
  tags: ['Dashboard'],
  auth: 'public',
  status: 204,
  errors: ['invalid_credentials'],
  async handler({ event, runtime }) {
    const token = sessionToken(event)
    if (token) await revokeSession(runtime.database, token)
    clearSessionCookie(event)
  },
})
