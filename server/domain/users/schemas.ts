import * as v from 'valibot'
import { coded } from '~/lib/errors'
import { Cursor, Id, Limit, Timestamp, JsonRecord } from '~/lib/schemas'
import { PLANS } from '~/domain/limits/plans'

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'))
const ZONES = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC'])

export const Email = v.pipe(
  v.string(coded('invalid_email', 'email must be a string.')),
  v.trim(),
  v.maxLength(254, coded('invalid_email', 'email is too long.')),
  v.email(coded('invalid_email', 'email is not a valid address.')),
  v.description('Unique per service.'),
)
export const Text = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(max))
const CurrencyCode = v.pipe(
  v.string(),
  v.check((s) => CURRENCIES.has(s), 'currency_code must be an ISO 4217 code such as USD.'),
  v.description('ISO 4217'),
)
const Timezone = v.pipe(
  v.string(),
  v.check((s) => ZONES.has(s), 'timezone must be an IANA zone name such as Europe/Paris.'),
  v.description('IANA zone'),
)
const Language = v.pipe(
  v.string(),
  v.regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'language must be a BCP-47 tag such as en or pt-BR.'),
)
export const ExternalIds = v.pipe(
  JsonRecord(
    v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'external_ids keys are 1-64 letters, digits, _ . : -')),
    v.pipe(v.string(), v.maxLength(256)),
  ),
  v.check((o) => Object.keys(o).length <= 50, 'external_ids holds at most 50 keys.'),
)

export const UserCreate = v.strictObject({
  email: Email,
  name: v.optional(Text(200)),
  plan: v.optional(v.picklist(PLANS, 'plan must be trial or starter.'), 'trial'),
  company_name: v.optional(Text(200)),
  language: v.optional(Language),
  timezone: v.optional(Timezone),
  currency_code: v.optional(CurrencyCode, 'USD'),
  external_ids: v.optional(ExternalIds),
  password: v.optional(
    v.pipe(v.string(), v.minLength(10, 'password must be at least 10 characters.'), v.maxLength(256)),
  ),
})
export type UserCreate = v.InferOutput<typeof UserCreate>

export const UserParams = v.object({ usr: Id('usr') })

const Ts = v.pipe(v.string(), v.isoTimestamp())
export const User = v.object({
  user_id: v.string(),
  account_id: v.string(),
  partner_id: v.pipe(
    v.nullable(v.string()),
    v.description('The partner (usr_) whose member this user is (POST /partners/members); null otherwise.'),
  ),
  email: v.string(),
  name: v.nullable(v.string()),
  plan: v.picklist(PLANS),
  plan_expires_at: v.nullable(Ts),
  company_name: v.nullable(v.string()),
  language: v.nullable(v.string()),
  timezone: v.nullable(v.string()),
  currency_code: v.string(),
  external_ids: JsonRecord(v.string(), v.string()),
  status: v.picklist(['active', 'suspended']),
  limits: JsonRecord(v.string(), v.number()),
  transcript_retention_days: v.nullable(v.number()),
  created_at: Ts,
  updated_at: Ts,
})
export type User = v.InferOutput<typeof User>

export const UserListQuery = v.object({
  status: v.optional(
    v.picklist(['active', 'suspended'], coded('unsupported_filter', 'status must be active or suspended.')),
  ),
  updated_since: v.optional(Timestamp),
  limit: Limit(100, 50),
  cursor: Cursor,
})

const Count = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1_000_000))
export const UserLimits = v.strictObject({
  max_calls_per_day: v.optional(v.nullable(Count)),
  inbound_calls_per_day: v.optional(v.nullable(Count)),
  max_agent_creates_per_day: v.optional(v.nullable(Count)),
  max_builds_per_day: v.optional(v.nullable(Count)),
  max_concurrent_builds: v.optional(v.nullable(v.pipe(Count, v.maxValue(100)))),
})

/**
 * A password someone chooses now (a reset, PATCH /users): at least 12 characters (decisions "Password
 * reset"); capped so that scrypt's input stays small.
 */
export const NewPassword = v.pipe(
  v.string(),
  v.minLength(12, 'password must be at least 12 characters.'),
  v.maxLength(256, 'password is at most 256 characters.'),
)

export const UserPatch = v.strictObject({
  // trial is derived from the plan, never set: the contract answers 400 validation_error field status.
  status: v.optional(
    v.picklist(['active', 'suspended'], 'status must be active or suspended (trial is derived from the plan).'),
  ),
  external_ids: v.optional(
    JsonRecord(
      v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'external_ids keys are 1-64 letters, digits, _ . : -')),
      v.nullable(v.pipe(v.string(), v.maxLength(256))),
    ),
  ),
  limits: v.optional(UserLimits),
  transcript_retention_days: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3650)))),
  password: v.optional(
    v.pipe(
      NewPassword,
      v.description('Sets the dashboard password: pending reset links and every dashboard session of the user end.'),
    ),
  ),
})
export type UserPatch = v.InferOutput<typeof UserPatch>

// The password-reset flow (POST /api/auth/password-reset and …/confirm, decisions "Password reset").
export const PasswordResetRequest = v.strictObject({ email: Email })

const ResetToken = v.pipe(
  v.string(),
  v.maxLength(128),
  v.description('svc_pwr_… from the link that POST /api/auth/password-reset mailed'),
)
export const PasswordResetConfirm = v.strictObject({ token: ResetToken, password: NewPassword })
export type PasswordResetConfirm = v.InferOutput<typeof PasswordResetConfirm>
export const PasswordResetPageQuery = v.object({ token: ResetToken })
