import * as v from 'valibot'
import { Cursor, Id, Limit } from '~/lib/schemas'
import { KeyCreate } from '~/domain/credentials/schemas'

const Ts = v.pipe(v.string(), v.isoTimestamp())

// Lengths are capped so a huge password cannot make scrypt (or the lookup) expensive.
export const LoginBody = v.strictObject({
  email: v.pipe(v.string(), v.maxLength(254)),
  password: v.pipe(v.string(), v.maxLength(256)),
})

const LinkToken = v.pipe(v.string(), v.maxLength(128), v.description('svc_lnk_… from POST /v1/users/{usr}/login-links'))
export const LoginLinkBody = v.strictObject({ token: LinkToken })
export const LoginLinkQuery = v.object({ token: LinkToken })

export const SessionAnswer = v.object({
  user_id: v.string(),
  account_id: v.string(),
  session_token: v.pipe(v.string(), v.description('svc_ses_…; also set as the svc_session cookie')),
  expires_at: Ts,
})

export const LoginLink = v.object({
  url: v.pipe(v.string(), v.description('Opens a dashboard session in a browser (GET)')),
  token: v.string(),
  expires_at: Ts,
})

// The dashboard acts for the logged-in user only: these keys are accepted so a form can send them, and dropped.
const Ignored = v.optional(
  v.pipe(
    v.unknown(),
    v.description('Accepted and ignored: dashboard keys are for the logged-in user and home account only.'),
  ),
)

export const DashboardKeyCreate = v.pipe(
  v.strictObject({ ...KeyCreate.entries, account_id: Ignored, account_ids: Ignored, user_id: Ignored }),
  v.transform(({ account_id: _a, account_ids: _b, user_id: _c, ...rest }) => rest),
)

export const DashboardKeyParams = v.object({ id: Id('key') })
export const DashboardKeyListQuery = v.object({ limit: Limit(100, 50), cursor: Cursor })
