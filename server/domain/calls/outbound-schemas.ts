// Shapes of the outbound call routes (decisions "Run surfaces", row Calls; docs/decisions "Outbound calls").
import * as v from 'valibot'
import { CALL_STATES, type CallState } from '~/kit/telephony'
import { Phone, QueryPhone } from '~/domain/dnc/schemas'
import { coded } from '~/lib/errors'
import { Cursor, Id, Limit, JsonRecord } from '~/lib/schemas'

export const CALL_STATUSES = CALL_STATES
export type CallStatus = CallState
export const FINAL_CALL_STATUSES: readonly CallStatus[] = ['completed', 'no_answer', 'failed', 'canceled']

/** hang_up is the only voicemail policy (contract unsupported_policy; decisions "Behaviour", row Voicemail). */
export const VOICEMAIL_POLICIES = ['hang_up'] as const
export type VoicemailPolicy = (typeof VOICEMAIL_POLICIES)[number]

/**
 * voicemail_policy where a write accepts it (POST /calls, POST /campaigns, profiles): hang_up, the default and
 * the only value, so an answering machine ends the call at once (outcome voicemail). Any other value is 400
 * unsupported_policy rather than an unknown field, so a client asking for leave_message learns why; a
 * picklist, so the OpenAPI document names the one value.
 */
export const VoicemailPolicy = v.optional(
  v.pipe(
    v.picklist(
      VOICEMAIL_POLICIES,
      coded('unsupported_policy', 'voicemail_policy is hang_up, the only policy: an answering machine ends the call.'),
    ),
    v.description(
      'On an answering machine: hang_up (the default and only policy); the call ends with outcome voicemail.',
    ),
  ),
)

const Variables = v.pipe(
  JsonRecord(
    v.pipe(v.string(), v.regex(/^[a-z_][a-z0-9_]{0,63}$/, 'variable names are [a-z_][a-z0-9_]{0,63}.')),
    v.string('variable values are strings.'),
  ),
  v.check((r) => Object.keys(r).length <= 50, 'variables has at most 50 entries.'),
  v.description('Values of the {{name}} placeholders of the role and greeting.'),
)

export const CreateCallBody = v.strictObject({
  agent_id: Id('agt'),
  to: v.pipe(Phone, v.description('The number to call, E.164.')),
  profile_id: v.optional(v.pipe(Id('prf'), v.description('A profile of the agent; or give role.'))),
  role: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, 'role must not be empty.'),
      v.maxLength(8000, 'role is at most 8000 characters.'),
      v.description('An inline role instead of a profile ({{name}} placeholders allowed).'),
    ),
  ),
  greeting: v.optional(
    v.pipe(v.string(), v.maxLength(1000, 'greeting is at most 1000 characters.'), v.description('With role only.')),
  ),
  from_number_id: v.optional(v.pipe(Id('num'), v.description("One of the account's numbers; the caller id."))),
  variables: v.optional(Variables),
  voicemail_policy: VoicemailPolicy,
})
export type CreateCallBody = v.InferOutput<typeof CreateCallBody>

export const CallParams = v.object({ call: Id('call') })

export const CallListQuery = v.strictObject({
  status: v.optional(v.picklist(CALL_STATUSES)),
  agent_id: v.optional(Id('agt')),
  campaign_id: v.optional(Id('cmp')),
  from: v.optional(v.pipe(QueryPhone, v.description('Caller id, E.164.'))),
  to: v.optional(v.pipe(QueryPhone, v.description('Called number, E.164.'))),
  limit: Limit(100, 50),
  cursor: Cursor,
})
export type CallListQuery = v.InferOutput<typeof CallListQuery>

const Ts = v.nullable(v.pipe(v.string(), v.isoTimestamp()))

export const CallResource = v.object({
  call_id: v.string(),
  account_id: v.string(),
  agent_id: v.string(),
  profile_id: v.nullable(v.string()),
  campaign_id: v.nullable(v.string()),
  direction: v.literal('outbound'),
  from: v.nullable(v.string()),
  to: v.string(),
  status: v.picklist(CALL_STATUSES),
  outcome: v.nullable(v.string()),
  conversation_id: v.nullable(v.string()),
  failure_reason: v.nullable(v.string()),
  variables: JsonRecord(v.string(), v.string()),
  started_at: Ts,
  answered_at: Ts,
  ended_at: Ts,
  duration_s: v.nullable(v.number()),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
  updated_at: v.pipe(v.string(), v.isoTimestamp()),
})
export type CallResource = v.InferOutput<typeof CallResource>
