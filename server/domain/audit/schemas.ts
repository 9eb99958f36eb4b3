import * as v from 'valibot'
import { coded } from '~/lib/errors'
import { Cursor, Limit, Timestamp } from '~/lib/schemas'
import { normaliseAccountId } from '~/domain/accounts/resolve'

const CredentialId = v.pipe(
  v.string(coded('invalid_id', 'credential_id must be a key id (key_<n>), a dashboard session id (ses_…) or master.')),
  v.regex(
    /^(key_\d{1,18}|ses_[0-9a-f]{16}|master)$/,
    coded('invalid_id', 'credential_id must be a key id (key_<n>), a dashboard session id (ses_…) or master.'),
  ),
  v.description('key_<n>, a dashboard session ses_<16 hex> or the literal master'),
)

// usr_7 and acc_7 name one tenant; normalising here means defineApiRoute's account resolution (which
// also reads account_id) and the filter both see acc_<n>.
const AccountId = v.pipe(
  v.string(coded('invalid_id', 'account_id must be acc_<n> or usr_<n>.')),
  v.regex(/^(acc|usr)_\d{1,18}$/, coded('invalid_id', 'account_id must be acc_<n> or usr_<n>.')),
  v.transform((s) => normaliseAccountId(s)!),
  v.description('acc_<n> (usr_<n> accepted)'),
)

const StatusCode = v.pipe(
  v.string(),
  v.regex(/^\d{3}$/, 'status_code must be an integer from 100 to 599.'),
  v.transform(Number),
  v.minValue(100, 'status_code must be an integer from 100 to 599.'),
  v.maxValue(599, 'status_code must be an integer from 100 to 599.'),
)

export const AUDIT_FORMATS = ['json', 'csv'] as const

export const AuditQuery = v.object({
  from: v.optional(v.pipe(Timestamp, v.description('Inclusive; default 24 hours before to.'))),
  to: v.optional(v.pipe(Timestamp, v.description('Exclusive; default now.'))),
  credential_id: v.optional(CredentialId),
  account_id: v.optional(AccountId),
  status_code: v.optional(StatusCode),
  format: v.optional(v.picklist(AUDIT_FORMATS, coded('unsupported_filter', 'format must be json or csv.')), 'json'),
  // No default here: csv refuses an explicit limit, so the handler must see whether one was sent.
  limit: v.optional(v.pipe(Limit(100, 50).wrapped, v.description('1 to 100, default 50; json only.'))),
  cursor: Cursor,
})
export type AuditQuery = v.InferOutput<typeof AuditQuery>

const Ts = v.pipe(v.string(), v.isoTimestamp())
export const AuditRow = v.object({
  request_id: v.string(),
  credential_type: v.nullable(v.picklist(['master', 'personal', 'oauth', 'session'])),
  credential_id: v.nullable(v.string()),
  account_ids: v.array(v.string()),
  cross_account: v.boolean(),
  method: v.string(),
  path: v.string(),
  status_code: v.number(),
  error_code: v.nullable(v.string()),
  ip: v.nullable(v.string()),
  user_agent: v.nullable(v.string()),
  duration_ms: v.number(),
  created_at: Ts,
})
export type AuditRow = v.InferOutput<typeof AuditRow>
