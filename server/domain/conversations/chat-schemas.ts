// Request schemas and the response shapes of the chat routes (POST /conversations, …/messages, …/end,
// …/identify). They answer the conversation through conversationResource (read.ts), as GET shows it.
import * as v from 'valibot'
import { mergeKeys } from '~/lib/keyset'
import { presentTurn } from './present'
import { apiError } from '~/lib/errors'
import { coded } from '~/lib/errors'
import { Id, JsonRecord } from '~/lib/schemas'
import { CONVERSATION_ENTRIES, ConversationOut, SPEAKERS } from './schemas'
import type { conversations, turns } from '~/db/schema'

export type ConversationRow = typeof conversations.$inferSelect
export type TurnRow = typeof turns.$inferSelect

export const ConversationParams = v.object({
  conv: v.pipe(
    v.string(coded('invalid_id', 'Expected an id of the form conv_<p|u|d><n>.')),
    v.regex(/^conv_[pud]\d{1,18}$/, coded('invalid_id', 'Expected an id of the form conv_<p|u|d><n>.')),
    v.description('conv_<p|u|d><n>'),
  ),
})

const JsonObject = v.pipe(JsonRecord(v.string(), v.unknown(), 'Expected an object.'), v.description('object'))

const UtmValue = v.optional(v.nullable(v.pipe(v.string(), v.maxLength(200, 'At most 200 characters.'))))
/** decisions "utm": the campaign the visitor came from; each value a string of at most 200 characters or null. */
export const Utm = v.pipe(
  v.strictObject({ source: UtmValue, medium: UtmValue, campaign: UtmValue, term: UtmValue, content: UtmValue }),
  v.transform(
    (u) => Object.fromEntries(Object.entries(u).filter(([, x]) => x !== undefined)) as Record<string, string | null>,
  ),
  v.description('{source, medium, campaign, term, content}: each a string of at most 200 characters, or null.'),
)

export const CreateConversationBody = v.strictObject({
  agent_id: v.pipe(v.string('agent_id is required.'), Id('agt')),
  send_greeting: v.optional(v.boolean('send_greeting must be a boolean.')),
  external_session_id: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(255)))),
  identity: v.optional(JsonObject),
  custom: v.optional(JsonObject),
  utm: v.optional(Utm),
})

export const MessageBody = v.strictObject({
  text: v.pipe(
    v.string('text is required.'),
    v.minLength(1, 'text must not be empty.'),
    v.maxLength(10_000, 'text is at most 10000 characters.'),
  ),
  idempotency_key: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(255))),
})

export const IdentifyBody = v.strictObject({ identity: JsonObject })
export const EndBody = v.optional(v.strictObject({}))

const E164 = /^\+[1-9]\d{6,14}$/
export const IDENTITY_VALUE_MAX = 1000

/**
 * "local@domain.tld": one @, no white space, a dot inside the domain with text on both sides. Scanned by
 * hand: the former /^[^\s@]+@[^\s@]+\.[^\s@]+$/ let two quantifiers compete for the same dots and took
 * time quadratic in the value (decisions "Hostile input").
 */
export function looksLikeEmail(value: string): boolean {
  const at = value.indexOf('@')
  if (at < 1 || value.indexOf('@', at + 1) !== -1 || /\s/.test(value)) return false
  const dot = value.indexOf('.', at + 2)
  return dot !== -1 && dot < value.length - 1
}

/**
 * Identity validation (decisions "Identity validation"): every value is a string (or null, which clears the key);
 * a value of another JSON type is 400 invalid_type naming the key; email must look like an address
 * (invalid_email) and phone_e164 must be E.164 (invalid_phone).
 */
export function validateIdentity(identity: Record<string, unknown>): Record<string, string | null> {
  const out: Record<string, string | null> = {}
  for (const [key, value] of Object.entries(identity)) {
    const field = `identity.${key}`
    if (value === null) {
      out[key] = null
      continue
    }
    if (typeof value !== 'string') throw apiError('invalid_type', `identity.${key} must be a string.`, field)
    // The length first: no pattern ever sees an unbounded value.
    if (value.length > IDENTITY_VALUE_MAX)
      throw apiError('validation_error', `identity.${key} is at most ${IDENTITY_VALUE_MAX} characters.`, field)
    if (key === 'email' && !looksLikeEmail(value))
      throw apiError('invalid_email', 'identity.email is not a valid e-mail address.', field)
    if (key === 'phone_e164' && !E164.test(value))
      throw apiError('invalid_phone', 'identity.phone_e164 must be an E.164 number such as +14155550123.', field)
    out[key] = value
  }
  return out
}

/** Merges validated identity into the stored one; null removes a key. */
export const mergeIdentity = (current: Record<string, unknown>, changes: Record<string, string | null>) =>
  mergeKeys(current, changes)

export const hasIdentity = (identity: Record<string, unknown>) =>
  !!(identity.email || identity.phone_e164 || identity.partner_agent_id)

export { presentTurn }

const TurnOut = v.object({
  turn_index: v.number(),
  speaker: v.picklist(SPEAKERS),
  text: v.string(),
  timestamp: v.pipe(v.string(), v.isoTimestamp()),
  confidence: v.null(),
  audio_offset_ms: v.nullable(v.number()),
  audio_duration_ms: v.nullable(v.number()),
  latency_ms: v.nullable(v.number()),
  latency_breakdown: v.pipe(
    v.nullable(
      v.object({
        endpoint_ms: v.nullable(v.number()),
        stt_ms: v.nullable(v.number()),
        llm_first_token_ms: v.nullable(v.number()),
        tts_first_byte_ms: v.nullable(v.number()),
      }),
    ),
    v.description(
      "Voice answers: where the wait between the end of the caller's speech and the first audio frame went (ms per stage; null for a stage that did not run). Null on every other turn.",
    ),
  ),
  turn_type: v.string(),
  detected_intent: v.nullable(v.string()),
  detected_language: v.nullable(v.string()),
  sources: v.null(),
  unanswered: v.boolean(),
  human_agent_id: v.nullable(v.string()),
  tool: v.optional(JsonRecord(v.string(), v.unknown())),
})

/**
 * The chat routes (201 on create; 200 on end and identify) answer the conversation as GET
 * /conversations/{conv} shows it with no query (conversationResource): the detail object.
 */
export const ChatConversationOut = v.object({
  ...CONVERSATION_ENTRIES,
  summary: v.nullable(JsonRecord(v.string(), v.unknown())),
  identity: JsonRecord(v.string(), v.unknown()),
  metrics: v.nullable(JsonRecord(v.string(), v.unknown())),
  transcript: v.array(TurnOut),
  custom: JsonRecord(v.string(), v.unknown()),
  redacted: v.boolean(),
  redaction_rules_applied: v.array(v.string()),
})

/** GET /conversations/{conv}: the list item plus, by `include`, the transcript (and its text rendering). */
export const ConversationDetail = v.object({
  ...ConversationOut.entries,
  transcript: v.optional(v.array(TurnOut)),
  transcript_text: v.optional(v.string()),
  custom: JsonRecord(v.string(), v.unknown()),
  redacted: v.boolean(),
  redaction_rules_applied: v.array(v.string()),
})

export const MessageOut = v.object({
  turn: TurnOut,
  turns: v.array(TurnOut),
  usage: v.object({
    tokens: v.object({ input: v.number(), output: v.number(), total: v.number() }),
    model: v.string(),
  }),
})
