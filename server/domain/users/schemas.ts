import * as v from 'valibot'
import { coded } from '../../utils/api-error'
import { Id } from '../../utils/schemas'

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'))
const ZONES = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC'])

export const PLANS = ['trial', 'starter'] as const

const Email = v.pipe(
  v.string(coded('invalid_email', 'email must be a string.')),
  v.trim(),
  v.maxLength(254, coded('invalid_email', 'email is too long.')),
  v.email(coded('invalid_email', 'email is not a valid address.')),
  v.description('Unique per service.'),
)
const Text = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(max))
const CurrencyCode = v.pipe(v.string(), v.check((s) => CURRENCIES.has(s), 'currency_code must be an ISO 4217 code such as USD.'), v.description('ISO 4217'))
const Timezone = v.pipe(v.string(), v.check((s) => ZONES.has(s), 'timezone must be an IANA zone name such as Europe/Paris.'), v.description('IANA zone'))
const Language = v.pipe(v.string(), v.regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'language must be a BCP-47 tag such as en or pt-BR.'))
const ExternalIds = v.pipe(
  v.record(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'external_ids keys are 1-64 letters, digits, _ . : -')), v.pipe(v.string(), v.maxLength(256))),
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
  password: v.optional(v.pipe(v.string(), v.minLength(10, 'password must be at least 10 characters.'), v.maxLength(256))),
})
export type UserCreate = v.InferOutput<typeof UserCreate>

export const UserParams = v.object({ usr: Id('usr') })

const Ts = v.pipe(v.string(), v.isoTimestamp())
export const User = v.object({
  user_id: v.string(),
  account_id: v.string(),
  email: v.string(),
  name: v.nullable(v.string()),
  plan: v.picklist(PLANS),
  plan_expires_at: v.nullable(Ts),
  company_name: v.nullable(v.string()),
  language: v.nullable(v.string()),
  timezone: v.nullable(v.string()),
  currency_code: v.string(),
  external_ids: v.record(v.string(), v.string()),
  status: v.picklist(['active', 'suspended']),
  limits: v.record(v.string(), v.number()),
  transcript_retention_days: v.nullable(v.number()),
  created_at: Ts,
  updated_at: Ts,
})
export type User = v.InferOutput<typeof User>
