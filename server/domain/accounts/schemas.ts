import * as v from 'valibot'
import { PLANS } from '~/domain/limits/plans'
import { coded } from '~/lib/errors'
import { AccountId, Cursor, Limit, Timestamp, JsonRecord } from '~/lib/schemas'

const AccountIdParam = AccountId
export const AccountParams = v.object({ acc: AccountIdParam })

export const AccountListQuery = v.object({
  status: v.optional(
    v.picklist(['active', 'suspended'], coded('unsupported_filter', 'status must be active or suspended.')),
  ),
  updated_since: v.optional(Timestamp),
  account_id: v.optional(v.array(AccountIdParam)),
  limit: Limit(100, 50),
  cursor: Cursor,
})

export const AccountPatch = v.strictObject({
  external_ids: v.optional(
    JsonRecord(
      v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'external_ids keys are 1-64 letters, digits, _ . : -')),
      v.nullable(v.pipe(v.string(), v.maxLength(256))),
    ),
  ),
  default_redaction: v.optional(v.boolean()),
  transcript_retention_days: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3650)))),
})
export type AccountPatch = v.InferOutput<typeof AccountPatch>

const Ts = v.pipe(v.string(), v.isoTimestamp())
export const Account = v.object({
  account_id: v.string(),
  name: v.string(),
  status: v.picklist(['active', 'suspended']),
  plan: v.picklist(PLANS),
  plan_expires_at: v.nullable(Ts),
  external_ids: JsonRecord(v.string(), v.string()),
  default_redaction: v.boolean(),
  transcript_retention_days: v.nullable(v.number()),
  created_at: Ts,
  updated_at: Ts,
})
export type Account = v.InferOutput<typeof Account>

const Counter = v.object({ limit: v.number(), used: v.number() })
export const AccountLimits = v.object({
  account_id: v.string(),
  max_concurrent_calls: v.number(),
  max_calls_per_day: v.number(),
  calls_today: v.number(),
  calls_in_progress: v.number(),
  inbound_calls_per_day: v.pipe(
    v.number(),
    v.description('Inbound calls a day (their own quota; they never count against max_calls_per_day)'),
  ),
  inbound_calls_today: v.pipe(v.number(), v.description('Inbound calls taken since 00:00 UTC')),
  inbound_calls_per_caller_per_hour: v.pipe(
    v.number(),
    v.description('Inbound calls one caller number may open an hour; beyond, a spoken refusal'),
  ),
  quotas: v.object({
    day: v.string(),
    resets_at: Ts,
    agent_creates: Counter,
    builds: Counter,
    kb_documents: Counter,
    chat_messages: Counter,
    webhook_tests: Counter,
    reindexes: Counter,
    test_turns: Counter,
    max_concurrent_builds: v.number(),
    builds_in_progress: v.number(),
  }),
  rate_limits: JsonRecord(v.string(), v.number()),
})

export const Balance = v.object({
  account_id: v.string(),
  wallet_balance: v.number(),
  currency_code: v.string(),
  monthly_spending: v.number(),
  plan_limit: v.number(),
  status: v.string(),
})

export const GROUP_BY = ['agent', 'agent_type', 'channel', 'date', 'month'] as const
export const UsageQuery = v.object({
  from: v.optional(Timestamp),
  to: v.optional(Timestamp),
  group_by: v.optional(v.pipe(v.string(), v.maxLength(200)), 'agent'),
  account_id: v.optional(v.array(AccountIdParam)),
})

export const UsageReport = v.object({
  data: v.array(JsonRecord(v.string(), v.union([v.string(), v.number(), v.null()]))),
  totals: v.object({ conversations: v.number(), voice_seconds: v.number(), tokens: v.number(), cost_usd: v.number() }),
})
