// Shapes of the operator surface (issue 18), shared by its routes.
import * as v from 'valibot'
import { coded } from '~/lib/errors'
import { Cursor, Limit, Timestamp, JsonRecord } from '~/lib/schemas'
import { PLANS } from '~/domain/limits/plans'
import { CONVERSATION_IDLE_SECONDS, VOICE_CHAT_MINUTES_PER_DAY, WIDGET_CONVERSATIONS_PER_DAY } from '~/config'
import { countryCode } from '~/domain/phone-numbers/dialable'

export const AdminAction = v.object({
  action_id: v.pipe(v.string(), v.description('act_<n>')),
  action: v.pipe(v.string(), v.description('What was done, e.g. customer.wallet.credit, agent.pause, config.update')),
  target: v.nullable(v.pipe(v.string(), v.description('The id it was done to (usr_, agt_, key_…), or null'))),
  params: JsonRecord(v.string(), v.unknown()),
  request_id: v.string(),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
})

export const AdminActionQuery = v.object({
  action: v.optional(v.pipe(v.string(), v.maxLength(100))),
  target: v.optional(v.pipe(v.string(), v.maxLength(100))),
  limit: Limit(100, 50),
  cursor: Cursor,
})

// Customers and the wallet (issue 18; server/domain/admin/customers.ts, wallet.ts).
export { UserParams as CustomerParams } from '~/domain/users/schemas'

const Ts = v.pipe(v.string(), v.isoTimestamp())
const Reason = v.pipe(v.string(), v.trim(), v.minLength(1, 'reason must not be empty.'), v.maxLength(500))

export const CustomerQuery = v.object({
  q: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200))),
  status: v.optional(
    v.picklist(['active', 'suspended'], coded('unsupported_filter', 'status must be active or suspended.')),
  ),
  plan: v.optional(v.picklist(PLANS, coded('unsupported_filter', `plan must be one of ${PLANS.join(', ')}.`))),
  limit: Limit(100, 50),
  cursor: Cursor,
})

export const Customer = v.object({
  user_id: v.string(),
  account_id: v.string(),
  email: v.string(),
  name: v.nullable(v.string()),
  company_name: v.nullable(v.string()),
  plan: v.string(),
  plan_expires_at: v.nullable(Ts),
  plan_limit: v.pipe(v.number(), v.description('Monthly allowance; spending above it is charged to the wallet')),
  status: v.picklist(['active', 'suspended']),
  subscription_status: v.pipe(v.string(), v.description('active, suspended, expired… (402 unless active)')),
  wallet_balance: v.number(),
  currency_code: v.string(),
  partner_id: v.nullable(v.string()),
  created_at: Ts,
})

export const WalletEntry = v.object({
  entry_id: v.pipe(v.string(), v.description('wal_<n>')),
  amount: v.pipe(v.number(), v.description('Positive adds to the wallet, negative takes from it')),
  currency_code: v.string(),
  kind: v.picklist(['credit', 'debit', 'adjustment']),
  reason: v.string(),
  balance_after: v.pipe(v.number(), v.description('The wallet balance including this entry')),
  created_at: Ts,
})

export const WalletQuery = v.object({ limit: Limit(200, 50), cursor: Cursor })

const Amount = v.pipe(
  v.number(),
  v.finite(),
  v.check((x) => Math.abs(x) <= 1_000_000, 'amount must be at most 1,000,000 in absolute value.'),
  v.check((x) => Math.round(x * 10_000) / 10_000 === x, 'amount takes at most 4 decimals.'),
)

export const WalletCreditBody = v.strictObject({
  amount: v.pipe(
    Amount,
    v.description('A credit: more than 0. An adjustment: any non-zero amount (negative corrects down).'),
  ),
  reason: Reason,
  kind: v.optional(v.picklist(['credit', 'adjustment'], 'kind must be credit or adjustment.'), 'credit'),
})

export const PlanBody = v.strictObject({
  plan: v.picklist(PLANS, `plan must be one of ${PLANS.join(', ')}.`),
  plan_expires_at: v.optional(v.nullable(Timestamp)),
  plan_limit: v.optional(
    v.pipe(
      v.number(),
      v.finite(),
      v.minValue(0, 'plan_limit must be 0 or more.'),
      v.maxValue(1_000_000, 'plan_limit must be at most 1,000,000.'),
      v.check((x) => Math.round(x * 100) / 100 === x, 'plan_limit takes at most 2 decimals.'),
    ),
  ),
})

export const StatusBody = v.strictObject({
  status: v.picklist(['active', 'suspended'], 'status must be active or suspended.'),
  reason: Reason,
})

const Counts = v.object({ today: v.number(), last_7_days: v.number() })
export const Overview = v.object({
  users: v.number(),
  accounts: v.object({
    total: v.number(),
    by_plan: JsonRecord(v.string(), v.number()),
    by_status: JsonRecord(v.string(), v.number()),
  }),
  agents: v.number(),
  conversations: v.pipe(Counts, v.description('Every channel but phone calls, by started_at (UTC day)')),
  calls: v.pipe(Counts, v.description('phone_inbound and phone_outbound')),
  wallet_total: v.number(),
  errors_5xx_24h: v.number(),
  queue_depth: v.pipe(v.nullable(v.number()), v.description('Jobs waiting (created or retry); null if unreadable')),
  generated_at: Ts,
})

export const CustomerOverview = v.object({
  user: v.object({
    user_id: v.string(),
    email: v.string(),
    name: v.nullable(v.string()),
    company_name: v.nullable(v.string()),
    status: v.string(),
    currency_code: v.string(),
    partner_id: v.nullable(v.string()),
    created_at: Ts,
  }),
  account: v.object({
    account_id: v.string(),
    name: v.string(),
    plan: v.string(),
    plan_expires_at: v.nullable(Ts),
    plan_limit: v.number(),
    status: v.string(),
    subscription_status: v.string(),
    created_at: Ts,
  }),
  agents: v.array(
    v.object({ agent_id: v.string(), name: v.string(), agent_type: v.string(), paused: v.boolean(), created_at: Ts }),
  ),
  usage_30d: v.object({
    from: Ts,
    to: Ts,
    conversations: v.number(),
    tokens: v.number(),
    cost_usd: v.number(),
    by_channel: v.array(
      v.object({ channel: v.string(), conversations: v.number(), tokens: v.number(), cost_usd: v.number() }),
    ),
  }),
  wallet: v.object({
    balance: v.number(),
    currency_code: v.string(),
    monthly_spending: v.number(),
    recent_entries: v.array(WalletEntry),
  }),
  recent_errors: v.array(
    v.object({
      request_id: v.string(),
      method: v.string(),
      path: v.string(),
      status_code: v.number(),
      error_code: v.nullable(v.string()),
      created_at: v.pipe(v.string(), v.isoTimestamp()),
    }),
  ),
})

// --- Agents, credentials, system and config (issue 18, wt-ops-system) ---
import { Id } from '~/lib/schemas'
import { Build, BUILD_STEPS } from '~/domain/builds/schemas'
import { ApiKey } from '~/domain/credentials/schemas'
import { RATE_LIMIT_NAMES } from '~/kit/rate-limit'
import { QUOTA_KINDS } from '~/domain/limits/quotas'

const IsoOrNull = v.nullable(v.pipe(v.string(), v.isoTimestamp()))

export const AdminAgent = v.object({
  agent_id: v.string(),
  account_id: v.string(),
  account_name: v.nullable(v.string()),
  account_status: v.nullable(v.string()),
  name: v.string(),
  agent_type: v.string(),
  website_url: v.nullable(v.string()),
  prompt_version: v.nullable(v.string()),
  paused: v.boolean(),
  paused_at: IsoOrNull,
  created_at: v.pipe(v.string(), v.isoTimestamp()),
  updated_at: v.pipe(v.string(), v.isoTimestamp()),
})

export const AdminAgentQuery = v.object({
  account_id: v.optional(v.pipe(v.string(), v.regex(/^acc_\d{1,18}$/, 'Expected an id of the form acc_<n>.'))),
  paused: v.optional(v.picklist(['true', 'false'], 'paused is true or false.')),
  q: v.optional(v.pipe(v.string(), v.maxLength(200))),
  limit: Limit(100, 50),
  cursor: Cursor,
})

export const AdminAgentParams = v.object({ agt: Id('agt') })

export const AdminAgentActionBody = v.strictObject({
  action: v.picklist(['rebuild', 'pause', 'resume'], 'action is one of rebuild, pause, resume.'),
  from_step: v.optional(v.picklist(BUILD_STEPS, `from_step is one of ${BUILD_STEPS.join(', ')}.`)),
  reason: v.optional(v.pipe(v.string(), v.maxLength(500))),
})

export const AdminAgentActionResult = v.object({
  agent: AdminAgent,
  build: v.nullable(Build),
})

export const AdminCredentialParams = v.object({ key: Id('key') })

export const AdminCredential = v.object({
  ...ApiKey.entries,
  source: v.string(),
  revoked_at: IsoOrNull,
  updated_at: v.pipe(v.string(), v.isoTimestamp()),
  user: v.nullable(
    v.object({
      user_id: v.string(),
      email: v.string(),
      name: v.nullable(v.string()),
      status: v.nullable(v.string()),
      account_id: v.string(),
    }),
  ),
  accounts: v.array(v.object({ account_id: v.string(), name: v.string(), status: v.string(), plan: v.string() })),
})

const Component = v.picklist(['ok', 'degraded', 'down'])
const CountOrNull = v.nullable(v.number())
export const SystemStatus = v.object({
  status: Component,
  version: v.string(),
  started_at: v.pipe(v.string(), v.isoTimestamp()),
  uptime_s: v.number(),
  instance_id: v.string(),
  components: JsonRecord(v.string(), Component),
  database: v.object({ kind: v.picklist(['pglite', 'postgres']), status: Component, probe_ms: v.number() }),
  queue: v.object({
    status: Component,
    depth: CountOrNull,
    created: CountOrNull,
    retry: CountOrNull,
    active: CountOrNull,
    failed_24h: CountOrNull,
  }),
  instances: v.array(
    v.object({
      instance_id: v.string(),
      started_at: v.pipe(v.string(), v.isoTimestamp()),
      seen_at: v.pipe(v.string(), v.isoTimestamp()),
      live: v.boolean(),
      current: v.boolean(),
    }),
  ),
  providers: v.object({ chat: v.string(), telephony: v.string() }),
})

const IntParam = (name: string, min: number, max: number, dflt: number) =>
  v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,6}$/, `${name} is an integer from ${min} to ${max}.`),
      v.transform(Number),
      v.minValue(min, `${name} is an integer from ${min} to ${max}.`),
      v.maxValue(max, `${name} is an integer from ${min} to ${max}.`),
    ),
    String(dflt),
  )

export const SystemErrorsQuery = v.object({
  hours: IntParam('hours', 1, 168, 24),
  limit: Limit(200, 50),
})

export const SystemErrors = v.object({
  since: v.string(),
  requests: v.array(
    v.object({
      request_id: v.string(),
      method: v.string(),
      path: v.string(),
      status: v.number(),
      error_code: v.nullable(v.string()),
      credential_id: v.nullable(v.string()),
      account_ids: v.array(v.string()),
      duration_ms: v.number(),
      created_at: v.pipe(v.string(), v.isoTimestamp()),
    }),
  ),
  jobs: v.array(
    v.object({
      job_id: v.string(),
      name: v.string(),
      retry_count: v.number(),
      error: v.nullable(v.string()),
      created_at: IsoOrNull,
      failed_at: IsoOrNull,
    }),
  ),
})

export const AiModels = v.object({
  data: v.array(
    v.object({
      engine: v.string(),
      active: v.boolean(),
      models: v.array(v.string()),
      default_model: v.nullable(v.string()),
      large_model: v.nullable(v.string()),
    }),
  ),
})

export const Migrations = v.object({
  data: v.array(v.object({ name: v.string(), checksum: v.string(), applied_at: v.pipe(v.string(), v.isoTimestamp()) })),
})

const Figure = v.pipe(
  v.number(),
  v.integer('Expected a whole number from 1 to 1000000, or null to remove the override.'),
  v.minValue(1, 'Expected a whole number from 1 to 1000000, or null to remove the override.'),
  v.maxValue(1_000_000, 'Expected a whole number from 1 to 1000000, or null to remove the override.'),
)
const overridesOf = <K extends string>(keys: readonly K[]) =>
  v.strictObject(
    Object.fromEntries(keys.map((k) => [k, v.optional(v.nullable(Figure))])) as Record<
      K,
      v.OptionalSchema<v.NullableSchema<typeof Figure, undefined>, undefined>
    >,
  )

const idleMessage = `Expected a whole number of seconds from ${CONVERSATION_IDLE_SECONDS.min} to ${CONVERSATION_IDLE_SECONDS.max}, or null to remove the override.`
const IdleSeconds = v.pipe(
  v.number(idleMessage),
  v.integer(idleMessage),
  v.minValue(CONVERSATION_IDLE_SECONDS.min, idleMessage),
  v.maxValue(CONVERSATION_IDLE_SECONDS.max, idleMessage),
)

/** A whole number in the range of a daily cap of the widget (decisions "Widget abuse"). */
const dailyCap = (range: { min: number; max: number }, unit: string) => {
  const message = `Expected a whole number of ${unit} from ${range.min} to ${range.max}, or null to remove the override.`
  return v.pipe(v.number(message), v.integer(message), v.minValue(range.min, message), v.maxValue(range.max, message))
}
const countryMessage = 'Expected an ISO 3166 alpha-2 country code such as US or GB.'
const CallCountries = v.pipe(
  v.array(
    v.pipe(
      v.string(countryMessage),
      v.maxLength(2, countryMessage),
      v.check((c) => countryCode(c) !== null, countryMessage),
      v.transform((c) => countryCode(c) as string),
    ),
    'call_countries is a list of ISO 3166 alpha-2 country codes, or null for every country.',
  ),
  v.minLength(1, 'call_countries needs at least one country; null allows every country.'),
  v.maxLength(250, 'call_countries holds at most 250 countries.'),
  v.transform((list) => [...new Set(list)]),
  v.description(
    'Countries (ISO 3166 alpha-2) outbound calls, campaign dials and transfers may reach; null: every country.',
  ),
)

export const ConfigPatch = v.strictObject({
  rate_limits: v.optional(overridesOf(RATE_LIMIT_NAMES)),
  quotas: v.optional(overridesOf(QUOTA_KINDS)),
  conversation_idle_seconds: v.optional(v.nullable(IdleSeconds)),
  widget_conversations_per_day: v.optional(v.nullable(dailyCap(WIDGET_CONVERSATIONS_PER_DAY, 'conversations'))),
  voice_chat_minutes_per_day: v.optional(v.nullable(dailyCap(VOICE_CHAT_MINUTES_PER_DAY, 'minutes'))),
  call_countries: v.optional(v.nullable(CallCountries)),
})

export const PlatformConfig = v.object({
  rate_limits: JsonRecord(v.string(), v.number()),
  quotas: JsonRecord(v.string(), v.number()),
  conversation_idle_seconds: v.number(),
  widget_conversations_per_day: v.number(),
  voice_chat_minutes_per_day: v.number(),
  call_countries: v.nullable(v.array(v.string())),
  overrides: v.object({
    rate_limits: JsonRecord(v.string(), v.number()),
    quotas: JsonRecord(v.string(), v.number()),
    conversation_idle_seconds: v.nullable(v.number()),
    widget_conversations_per_day: v.nullable(v.number()),
    voice_chat_minutes_per_day: v.nullable(v.number()),
    call_countries: v.nullable(v.array(v.string())),
  }),
  updated_at: IsoOrNull,
  applied_at: IsoOrNull,
  poll_interval_s: v.number(),
})
