import * as v from 'valibot'
import { coded } from '~/lib/errors'
import { Cursor, Id, Limit } from '~/lib/schemas'
import { isValidAllowEntry } from '~/lib/ip'

const ScopeList = v.pipe(
  v.array(
    v.string(coded('invalid_scope', 'scopes must be strings.')),
    coded('invalid_scope', 'scopes must be an array of scope names.'),
  ),
  v.maxLength(64, coded('invalid_scope', 'Too many scopes.')),
  v.description('Scope names from the catalogue; master-only scopes are refused.'),
)
const AccountIds = v.pipe(
  v.array(v.pipe(v.string(), v.regex(/^(acc|usr)_\d{1,18}$/, 'account_ids holds acc_<n> ids.'))),
  v.maxLength(100),
)
const IpAllowlist = v.pipe(
  v.array(
    v.pipe(
      v.string(),
      v.check(isValidAllowEntry, 'ip_allowlist holds IPv4/IPv6 addresses or CIDRs such as 203.0.113.0/24.'),
    ),
  ),
  v.maxLength(100),
)
const ExpiresInDays = v.pipe(
  v.number(),
  v.integer('expires_in_days must be a whole number.'),
  v.minValue(1, 'expires_in_days is 1 to 365.'),
  v.maxValue(365, 'expires_in_days is 1 to 365.'),
)

export const KeyCreate = v.strictObject({
  name: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(100))),
  scopes: ScopeList,
  account_ids: v.optional(AccountIds),
  environment: v.optional(v.picklist(['live'], 'environment must be live.'), 'live'),
  expires_in_days: v.optional(ExpiresInDays, 365),
  ip_allowlist: v.optional(IpAllowlist, []),
  // Body account_id takes part in account resolution (contract) and must be on the credential.
  account_id: v.optional(v.pipe(v.string(), v.regex(/^(acc|usr)_\d{1,18}$/, 'account_id is acc_<n>.'))),
})
export type KeyCreate = v.InferOutput<typeof KeyCreate>

/** Dashboard PATCH: scopes replace the whole set; expires_in_days counts from now. */
export const KeyUpdate = v.strictObject({
  scopes: v.optional(ScopeList),
  expires_in_days: v.optional(ExpiresInDays),
})
export type KeyUpdate = v.InferOutput<typeof KeyUpdate>

export const KeyParams = v.object({ key: Id('key') })

export const KeyListQuery = v.object({ limit: Limit(100, 50), cursor: Cursor })
export const CredentialListQuery = v.object({
  user_id: v.optional(
    v.pipe(v.string(), v.regex(/^(usr|acc)_\d{1,18}$/, coded('invalid_id', 'user_id is usr_<n> or acc_<n>.'))),
  ),
  limit: Limit(100, 50),
  cursor: Cursor,
})

const Ts = v.pipe(v.string(), v.isoTimestamp())
export const ApiKey = v.object({
  key_id: v.string(),
  name: v.nullable(v.string()),
  key_prefix: v.string(),
  secret: v.optional(v.string()),
  user_id: v.string(),
  scopes: v.array(v.string()),
  account_ids: v.array(v.string()),
  environment: v.literal('live'),
  ip_allowlist: v.array(v.string()),
  status: v.picklist(['active', 'revoked']),
  expires_at: Ts,
  rotated_from: v.nullable(v.string()),
  created_at: Ts,
  grace_expires_at: v.optional(Ts),
})
export type ApiKey = v.InferOutput<typeof ApiKey>
