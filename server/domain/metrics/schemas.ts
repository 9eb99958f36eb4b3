// Query and response schemas of GET /metrics/conversations and GET /metrics (issue 6).
import * as v from 'valibot'
import { coded } from '~/lib/errors'
import { AccountId, Id, Timestamp, JsonRecord } from '~/lib/schemas'

/** decisions "Outcome values": every key of `outcomes` is always present. */
export const OUTCOMES = [
  'resolved',
  'unresolved',
  'lead_captured',
  'ticket_created',
  'order_placed',
  'transferred',
  'escalated',
  'abandoned',
  'voicemail',
  'no_answer',
  'failed',
] as const
export const CHANNELS = [
  'api',
  'widget',
  'phone_inbound',
  'phone_outbound',
  'voice_chat',
  'dashboard',
  'import',
] as const
export const METRIC_GROUPS = ['agent', 'agent_version', 'day'] as const
export type MetricGroup = (typeof METRIC_GROUPS)[number]

const ChannelFilter = v.picklist(
  CHANNELS,
  coded('unsupported_filter', `channel must be one of ${CHANNELS.join(', ')}.`),
)

const WindowQuery = {
  from: v.optional(Timestamp),
  to: v.optional(Timestamp),
  agent_id: v.optional(v.array(Id('agt'))),
  channel: v.optional(v.array(ChannelFilter)),
  account_id: v.optional(v.array(AccountId)),
}

export const MetricsOverviewQuery = v.object(WindowQuery)

export const ConversationMetricsQuery = v.object({
  ...WindowQuery,
  group_by: v.optional(
    v.picklist(METRIC_GROUPS, coded('unsupported_filter', `group_by must be one of ${METRIC_GROUPS.join(', ')}.`)),
    'day',
  ),
})

export const METRICS_REPEATABLE = ['agent_id', 'channel', 'account_id']

const Num = v.number()
const NullableNum = v.nullable(v.number())
const Latency = v.object({ p50: NullableNum, p90: NullableNum, p99: NullableNum })
const Outcomes = v.object(
  Object.fromEntries(OUTCOMES.map((o) => [o, Num])) as Record<(typeof OUTCOMES)[number], typeof Num>,
)

const ConversationFigures = {
  conversations: Num,
  completed: Num,
  outcomes: Outcomes,
  without_outcome: Num,
  escalated: Num,
  answers: Num,
  unanswered: Num,
  unanswered_rate: NullableNum,
  latency_ms: Latency,
  tokens: Num,
}

export const DeployMarker = v.object({
  agent_id: v.string(),
  agent_version: v.string(),
  prompt_version: v.nullable(v.string()),
  reason: v.string(),
  deployed_at: v.pipe(v.string(), v.isoTimestamp()),
})

export const ConversationMetricsRow = v.object({
  agent_id: v.optional(v.nullable(v.string())),
  agent_version: v.optional(v.nullable(v.string())),
  day: v.optional(v.string()),
  ...ConversationFigures,
})

export const ConversationMetricsReport = v.object({
  data: v.array(ConversationMetricsRow),
  totals: v.object(ConversationFigures),
  markers: v.array(DeployMarker),
})

export const MetricsOverview = v.object({
  ...ConversationFigures,
  active_agents: Num,
  cost_usd: Num,
  voice_seconds: Num,
  billed_sessions: Num,
  widget_events: v.object({
    totals: JsonRecord(v.string(), Num),
    agents: v.array(v.object({ agent_id: v.string(), counts: JsonRecord(v.string(), Num) })),
  }),
})
