// Shapes of the phone-number routes (decisions "Run surfaces", row "Phone numbers"): a number the
// account holds with the configured telephony provider, optionally assigned to one of its agents.
import { parsePhoneNumberFromString } from 'libphonenumber-js'
import * as v from 'valibot'
import { coded } from '~/lib/errors'
import { Cursor, Id, Limit } from '~/lib/schemas'

/** Longest input looked at: E.164 is at most 16 characters; room for spaces, hyphens and parentheses. */
const MAX_INPUT = 32
const E164_MESSAGE = 'e164 must be an E.164 number such as +14155550123 (a + then the country code).'

/**
 * A number in international form (a leading +, then digits with optional spaces, hyphens, dots or
 * parentheses between them), valid for its country by libphonenumber-js; answers its canonical E.164
 * form (+14155550123), or null. National forms, extensions, letters and impossible numbers are null.
 */
export function canonicalE164(input: string): string | null {
  if (input.length > MAX_INPUT || !/^\+[0-9][0-9 ().-]*$/.test(input)) return null
  const parsed = parsePhoneNumberFromString(input)
  if (!parsed || parsed.ext || !parsed.isValid()) return null
  return parsed.number
}

const E164 = v.pipe(
  v.string(coded('invalid_phone', E164_MESSAGE)),
  v.check((s) => canonicalE164(s) !== null, coded('invalid_phone', E164_MESSAGE)),
  v.transform((s) => canonicalE164(s) as string),
  v.description('E.164, e.g. +14155550123'),
)
const Label = v.nullable(
  v.pipe(v.string('label must be a string or null.'), v.maxLength(200, 'label is at most 200 characters.')),
)
const AgentRef = v.nullable(Id('agt'))

export const CreateNumberBody = v.strictObject({
  e164: E164,
  agent_id: v.optional(AgentRef),
  label: v.optional(Label),
})
export type CreateNumberBody = v.InferOutput<typeof CreateNumberBody>

export const PatchNumberBody = v.strictObject({
  agent_id: v.optional(AgentRef),
  label: v.optional(Label),
})
export type PatchNumberBody = v.InferOutput<typeof PatchNumberBody>

export const NumberParams = v.object({ num: Id('num') })

export const NumberListQuery = v.strictObject({
  agent_id: v.optional(Id('agt')),
  limit: Limit(100, 50),
  cursor: Cursor,
})
export type NumberListQuery = v.InferOutput<typeof NumberListQuery>

export const PhoneNumber = v.object({
  number_id: v.string(),
  account_id: v.string(),
  e164: v.string(),
  provider: v.string(),
  agent_id: v.nullable(v.string()),
  label: v.nullable(v.string()),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
  updated_at: v.pipe(v.string(), v.isoTimestamp()),
})
