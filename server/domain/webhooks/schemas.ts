// Shapes of the webhook routes (contract "Webhook endpoint", "Webhooks", "Events"; decisions "Events",
// "Retries"). The event names are the contract's seven plus decisions' conversation.deleted and
// test_run.completed (decisions "Test runs"), conversation.analyzed (decisions "Conversation analysis"),
// kb.synced (decisions "Knowledge sync").
import * as v from 'valibot'
import { coded } from '~/lib/errors'
import { Cursor, Id, Limit, Timestamp, JsonRecord } from '~/lib/schemas'

export const EVENT_TYPES = [
  'conversation.started',
  'conversation.ended',
  'conversation.escalated',
  'conversation.deleted',
  'summary.ready',
  'call.completed',
  'call.failed',
  'call.no_answer',
  'test_run.completed',
  'conversation.analyzed',
  'kb.synced',
] as const
export type WebhookEventType = (typeof EVENT_TYPES)[number]

export const DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'exhausted'] as const

const EventName = v.picklist(EVENT_TYPES, `Unknown event name; expected one of ${EVENT_TYPES.join(', ')}.`)
const Events = v.pipe(
  v.array(EventName),
  v.minLength(1, 'events must name at least one event.'),
  v.maxLength(EVENT_TYPES.length, 'events names each event at most once.'),
  v.check((xs) => new Set(xs).size === xs.length, 'events names each event at most once.'),
)
// The URL's shape and host are checked by the url guard (400 invalid_url); here only the type and size.
const Url = v.pipe(
  v.string(coded('invalid_url', 'url must be a string.')),
  v.maxLength(2048, coded('invalid_url', 'url is longer than 2048 characters.')),
)
const Description = v.nullable(v.pipe(v.string(), v.maxLength(500)))

export const CreateEndpointBody = v.strictObject({
  url: Url,
  events: Events,
  description: v.optional(Description),
  enabled: v.optional(v.boolean()),
})
export type CreateEndpointBody = v.InferOutput<typeof CreateEndpointBody>

export const PatchEndpointBody = v.strictObject({
  url: v.optional(Url),
  events: v.optional(Events),
  description: v.optional(Description),
  enabled: v.optional(v.boolean()),
})
export type PatchEndpointBody = v.InferOutput<typeof PatchEndpointBody>

export const EndpointParams = v.object({ whk: Id('whk') })
export const DeliveryParams = v.object({
  dlv: v.pipe(
    v.string(coded('invalid_id', 'Expected an id of the form dlv_<id>.')),
    v.regex(/^dlv_[0-9A-Z]{26}$/, coded('invalid_id', 'Expected an id of the form dlv_<id>.')),
    v.description('dlv_<id>'),
  ),
})

export const EndpointListQuery = v.strictObject({ limit: Limit(100, 50), cursor: Cursor })

export const DeliveryListQuery = v.strictObject({
  endpoint_id: v.optional(Id('whk')),
  // `ping`: the stored test pings (POST …/test), which no endpoint subscribes to.
  event: v.optional(
    v.picklist(
      [...EVENT_TYPES, 'ping'],
      coded('unsupported_filter', `event must be one of ${EVENT_TYPES.join(', ')} or ping.`),
    ),
  ),
  event_id: v.optional(
    v.pipe(v.string(), v.regex(/^evt_[0-9A-Z]{26}$/, coded('invalid_id', 'Expected an id of the form evt_<id>.'))),
  ),
  status: v.optional(
    v.picklist(
      [...DELIVERY_STATUSES],
      coded('unsupported_filter', `status must be one of ${DELIVERY_STATUSES.join(', ')}.`),
    ),
  ),
  since: v.optional(Timestamp),
  limit: Limit(100, 50),
  cursor: Cursor,
})
export type DeliveryListQuery = v.InferOutput<typeof DeliveryListQuery>

export const Endpoint = v.object({
  endpoint_id: v.string(),
  account_id: v.string(),
  url: v.string(),
  description: v.nullable(v.string()),
  events: v.array(v.string()),
  enabled: v.boolean(),
  environment: v.literal('live'),
  api_version: v.literal('v1'),
  previous_secret_expires_at: v.nullable(v.pipe(v.string(), v.isoTimestamp())),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
  updated_at: v.pipe(v.string(), v.isoTimestamp()),
})
export const EndpointWithSecret = v.object({ ...Endpoint.entries, secret: v.string() })

export const Attempt = v.object({
  attempt: v.number(),
  at: v.string(),
  status_code: v.nullable(v.number()),
  latency_ms: v.number(),
  error: v.nullable(v.string()),
})
export const Delivery = v.object({
  delivery_id: v.string(),
  endpoint_id: v.string(),
  event_id: v.string(),
  event_type: v.picklist([...EVENT_TYPES, 'ping']),
  status: v.picklist(DELIVERY_STATUSES),
  attempt_count: v.number(),
  attempts: v.array(Attempt),
  next_attempt_at: v.nullable(v.pipe(v.string(), v.isoTimestamp())),
  last_status_code: v.nullable(v.number()),
  last_error: v.nullable(v.string()),
  replayed_from: v.nullable(v.string()),
  delivered_at: v.nullable(v.pipe(v.string(), v.isoTimestamp())),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
  updated_at: v.pipe(v.string(), v.isoTimestamp()),
})
export const DeliveryDetail = v.object({ ...Delivery.entries, payload: JsonRecord(v.string(), v.unknown()) })

export const TestResult = v.object({
  endpoint_id: v.string(),
  delivery_id: v.string(),
  event_id: v.string(),
  success: v.boolean(),
  status_code: v.nullable(v.number()),
  latency_ms: v.number(),
  error: v.nullable(v.string()),
  quota: v.object({ limit: v.number(), used: v.number(), remaining: v.number() }),
})
