// Conversation enums (decisions "Names the contract leaves open") and the query/body schemas of the
// reading, import and delete routes.
import * as v from 'valibot'
import { coded } from '~/lib/errors'
import { AccountId, Cursor, Id, JsonRecord, Limit, QueryBoolean, Timestamp } from '~/lib/schemas'
import { AGENT_TYPES } from '~/domain/agents/schemas'

export const CONVERSATION_STATUSES = ['in_progress', 'completed', 'abandoned', 'failed'] as const
export const CHANNELS = [
  'api',
  'widget',
  'phone_inbound',
  'phone_outbound',
  'voice_chat',
  'dashboard',
  'import',
] as const
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
export const SPEAKERS = ['agent', 'visitor', 'human_agent'] as const
export const TURN_TYPES = ['greeting', 'message', 'answer', 'tool', 'handoff'] as const
export const LIST_INCLUDES = ['summary', 'identity', 'metrics', 'analysis'] as const
/** The detail's default includes (and event data's); `analysis` is asked for by name. */
export const DETAIL_INCLUDES = ['transcript', 'summary', 'identity', 'metrics'] as const
export const DETAIL_INCLUDE_OPTIONS = [...DETAIL_INCLUDES, 'analysis'] as const
export const SORTS = ['-started_at', 'started_at', '-updated_at', 'updated_at'] as const
export type Sort = (typeof SORTS)[number]
export type ListInclude = (typeof LIST_INCLUDES)[number]
export type DetailInclude = (typeof DETAIL_INCLUDES)[number]

/** A repeatable enum filter: any value outside the list is 400 unsupported_filter naming the key. */
const EnumList = (name: string, values: readonly string[]) =>
  v.optional(
    v.pipe(
      v.array(v.string()),
      v.check(
        (xs) => xs.every((x) => values.includes(x)),
        coded('unsupported_filter', `Unknown ${name} value; expected one of ${values.join(', ')}.`),
      ),
      // The values, for OpenAPI: the check above is invisible to the JSON Schema conversion.
      v.metadata({ items: { type: 'string', enum: [...values] } }),
    ),
  )

const BCP47 = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/

export const ConversationId = v.pipe(
  v.string(coded('invalid_id', 'Expected an id of the form conv_<p|u|d><n>.')),
  v.regex(/^conv_[pud]\d{1,18}$/, coded('invalid_id', 'Expected an id of the form conv_<p|u|d><n>.')),
  v.description('conv_<p|u|d><n>'),
)
export const ConversationParams = v.object({ conv: ConversationId })

export const ListQuery = v.object({
  account_id: v.optional(v.array(AccountId)),
  agent_id: v.optional(v.array(Id('agt'))),
  agent_type: EnumList('agent_type', AGENT_TYPES),
  channel: EnumList('channel', CHANNELS),
  status: EnumList('status', CONVERSATION_STATUSES),
  outcome: EnumList('outcome', OUTCOMES),
  language: v.optional(
    v.array(v.pipe(v.string(), v.regex(BCP47, 'language: expected a BCP-47 tag such as en or en-GB.'))),
  ),
  from: v.optional(Timestamp),
  to: v.optional(Timestamp),
  updated_since: v.optional(Timestamp),
  escalated: QueryBoolean,
  has_identity: QueryBoolean,
  has_recording: QueryBoolean,
  external_session_id: v.optional(v.pipe(v.string(), v.maxLength(256))),
  include: v.optional(v.string()),
  limit: Limit(500, 50),
  cursor: Cursor,
  sort: v.optional(
    v.picklist(SORTS, coded('unsupported_filter', `Unknown sort; expected one of ${SORTS.join(', ')}.`)),
    '-started_at',
  ),
})
export type ListQuery = v.InferOutput<typeof ListQuery>
export const LIST_REPEATABLE = ['account_id', 'agent_id', 'agent_type', 'channel', 'status', 'outcome', 'language']

export const DetailQuery = v.object({
  account_id: v.optional(v.array(AccountId)),
  include: v.optional(v.string()),
  transcript_format: v.optional(
    v.picklist(['turns', 'text'], coded('unsupported_filter', 'transcript_format is turns or text.')),
    'turns',
  ),
  redact: QueryBoolean,
})
export type DetailQuery = v.InferOutput<typeof DetailQuery>

export const AccountOnlyQuery = v.object({ account_id: v.optional(v.array(AccountId)) })

export const DeletedQuery = v.object({
  account_id: v.optional(v.array(AccountId)),
  since: v.optional(Timestamp),
  limit: Limit(200, 50),
  cursor: Cursor,
})
export type DeletedQuery = v.InferOutput<typeof DeletedQuery>

const E164 = /^\+[1-9]\d{6,14}$/
const Text = (max: number) => v.pipe(v.string(), v.maxLength(max))

/** Which way an imported call went; its channel is always import (decisions "Behaviour", Smaller contract points). */
export const IMPORT_DIRECTIONS = ['inbound', 'outbound'] as const

export const ImportTurn = v.strictObject({
  speaker: v.picklist(SPEAKERS),
  text: Text(20_000),
  timestamp: Timestamp,
})

export const ImportSummary = v.strictObject({
  text: Text(20_000),
  outcome: v.picklist(OUTCOMES),
  sentiment: v.optional(v.nullable(Text(40))),
  topics: v.optional(v.array(Text(200))),
  action_items: v.optional(v.array(Text(1000))),
  escalated_to_human: v.optional(v.strictObject({ value: v.boolean(), reason: v.optional(v.nullable(Text(1000))) })),
  lead: v.optional(
    v.nullable(
      v.strictObject({
        name: v.optional(v.nullable(Text(200))),
        email: v.optional(v.nullable(Text(320))),
        phone_e164: v.optional(v.nullable(Text(20))),
      }),
    ),
  ),
  language: v.optional(v.nullable(Text(35))),
})

export const ImportBody = v.strictObject({
  agent_id: Id('agt'),
  direction: v.optional(
    v.pipe(
      v.picklist(IMPORT_DIRECTIONS, 'direction is inbound or outbound.'),
      v.description('Who dialled: the caller at identity.phone_e164 (inbound, the default) or the account (outbound).'),
    ),
    'inbound',
  ),
  external_session_id: v.optional(Text(256)),
  identity: v.optional(
    v.strictObject({
      phone_e164: v.optional(
        v.nullable(
          v.pipe(
            v.string(coded('invalid_type', 'identity.phone_e164 must be a string.')),
            v.regex(E164, coded('invalid_phone', 'identity.phone_e164 must be an E.164 number such as +14155550100.')),
          ),
        ),
      ),
      email: v.optional(
        v.nullable(
          v.pipe(
            v.string(coded('invalid_type', 'identity.email must be a string.')),
            v.email(coded('invalid_email', 'identity.email is not a valid e-mail address.')),
          ),
        ),
      ),
      name: v.optional(v.nullable(Text(200))),
    }),
  ),
  started_at: Timestamp,
  ended_at: v.optional(Timestamp),
  duration_s: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(86_400))),
  transcript: v.optional(v.pipe(v.array(ImportTurn), v.maxLength(2000))),
  summary: ImportSummary,
  language: v.optional(v.pipe(v.string(), v.regex(BCP47, 'language: expected a BCP-47 tag such as en or en-GB.'))),
})
export type ImportBody = v.InferOutput<typeof ImportBody>

export const Tombstone = v.object({
  conversation_id: v.string(),
  account_id: v.string(),
  deleted_at: v.pipe(v.string(), v.isoTimestamp()),
  reason: v.string(),
})
const JsonObject = JsonRecord(v.string(), v.unknown())
const Iso = v.pipe(v.string(), v.isoTimestamp())
/** The keys every conversation read shows (present.ts presentListItem), whatever it includes. */
export const CONVERSATION_ENTRIES = {
  conversation_id: v.string(),
  account_id: v.string(),
  agent_id: v.nullable(v.string()),
  agent_type: v.picklist(AGENT_TYPES),
  status: v.picklist(CONVERSATION_STATUSES),
  session_id: v.string(),
  external_session_id: v.nullable(v.string()),
  agent_version: v.nullable(v.string()),
  prompt_version: v.nullable(v.string()),
  model: v.nullable(v.string()),
  channel_detail: v.object({ channel: v.picklist(CHANNELS) }),
  started_at: Iso,
  ended_at: v.nullable(Iso),
  updated_at: Iso,
  duration_s: v.nullable(v.number()),
  language: v.nullable(v.string()),
  outcome: v.nullable(v.picklist(OUTCOMES)),
  escalated: v.boolean(),
  has_identity: v.boolean(),
  has_recording: v.boolean(),
  turn_count: v.number(),
  country: v.nullable(v.string()),
  ip_country_only: v.boolean(),
  utm: v.object({
    source: v.nullable(v.string()),
    medium: v.nullable(v.string()),
    campaign: v.nullable(v.string()),
    term: v.nullable(v.string()),
    content: v.nullable(v.string()),
  }),
  summary_status: v.string(),
}
/** A conversation of the list; summary, identity, metrics and analysis are there when `include` names them. */
export const ConversationOut = v.object({
  ...CONVERSATION_ENTRIES,
  summary: v.optional(v.nullable(JsonObject)),
  identity: v.optional(JsonObject),
  metrics: v.optional(v.nullable(JsonObject)),
  analysis: v.optional(v.nullable(JsonObject)),
})
