// Shapes of the operator surface (issue 18), shared by its routes.
import * as v from 'valibot'
import { Cursor, Limit } from '~/lib/schemas'

export const AdminAction = v.object({
  action_id: v.pipe(v.string(), v.description('act_<n>')),
  action: v.pipe(v.string(), v.description('What was done, e.g. customer.wallet.credit, agent.pause, config.update')),
  target: v.nullable(v.pipe(v.string(), v.description('The id it was done to (usr_, agt_, key_…), or null'))),
  params: v.record(v.string(), v.unknown()),
  request_id: v.string(),
  created_at: v.string(),
})

export const AdminActionQuery = v.object({
  action: v.optional(v.pipe(v.string(), v.maxLength(100))),
  target: v.optional(v.pipe(v.string(), v.maxLength(100))),
  limit: Limit(100, 50),
  cursor: Cursor,
})

// --- Agents, credentials, system and config (issue 18, wt-ops-system) ---
import { Id } from '~/lib/schemas'
import { Build, BUILD_STEPS } from '~/domain/builds/schemas'
import { ApiKey } from '~/domain/credentials/schemas'
import { RATE_CLASSES } from '~/kit/rate-limit'
import { QUOTA_KINDS } from '~/domain/limits/quotas'

const IsoOrNull = v.nullable(v.string())

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
  created_at: v.string(),
  updated_at: v.string(),
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
  updated_at: v.string(),
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
  started_at: v.string(),
  uptime_s: v.number(),
  instance_id: v.string(),
  components: v.record(v.string(), Component),
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
      started_at: v.string(),
      seen_at: v.string(),
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
      created_at: v.string(),
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
  data: v.array(v.object({ name: v.string(), checksum: v.string(), applied_at: v.string() })),
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

export const ConfigPatch = v.strictObject({
  rate_limits: v.optional(overridesOf(RATE_CLASSES)),
  quotas: v.optional(overridesOf(QUOTA_KINDS)),
})

export const PlatformConfig = v.object({
  rate_limits: v.record(v.string(), v.number()),
  quotas: v.record(v.string(), v.number()),
  overrides: v.object({
    rate_limits: v.record(v.string(), v.number()),
    quotas: v.record(v.string(), v.number()),
  }),
  updated_at: IsoOrNull,
  applied_at: IsoOrNull,
  poll_interval_s: v.number(),
})
