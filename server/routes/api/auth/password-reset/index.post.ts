import { defineApiRoute } from '~/http/define-api-route'
import { audited } from '~/http/define-session-route'
import { clientIpKey } from '~/http/client-ip'
import { publicOrigin } from '~/http/public-origin'
import { PasswordResetRequest } from '~/domain/users/schemas'
import { limitResetRequests, queuePasswordReset } from '~/domain/users/password-reset'

export default audited(
  defineApiRoute({
    summary: 'Ask for a password-reset link',
    description:
      'Answers 202 whatever the address: when it is an active dashboard user’s, a one-time link valid 30 minutes is mailed to it (a newer request replaces the older link), otherwise nothing is sent. The mail is sent after the answer. At most 20 requests an hour per client IP and 5 per address (counted for every address, known or not); past either, 429 `rate_limited` with `Retry-After`. Audited.',
    tags: ['Dashboard'],
    auth: 'public',
    body: PasswordResetRequest,
    status: 202,
    errors: ['invalid_email', 'rate_limited'],
    async handler({ event, runtime, body }) {
      await limitResetRequests(runtime.hourlyLimiter, clientIpKey(event), body.email)
      // The link's origin is the configured one (publicOrigin never reads the Host header): a forged Host
      // must not send someone's token to another site.
      const publicUrl = publicOrigin(event, runtime.config)
      queuePasswordReset({ database: runtime.database, mailer: runtime.providers.mail, publicUrl }, body.email)
    },
  }),
)
