// Shapes of the do-not-call routes (decisions "Run surfaces", row "Do-not-call"): one entry per number
// and account, written by the API (source api), by a caller's opt-out on a call (opt_out) or by imports.
import * as v from 'valibot'
import { canonicalE164 } from '~/domain/phone-numbers/schemas'
import { coded } from '~/lib/errors'
import { Cursor, Id, Limit } from '~/lib/schemas'

export const DNC_SOURCES = ['api', 'opt_out', 'import'] as const
export type DncSource = (typeof DNC_SOURCES)[number]

const PHONE_MESSAGE = 'phone must be an E.164 number such as +14155550123 (a + then the country code).'

/** A form-encoded query turns a leading + into a space: read it back as the +. */
const plusFromQuery = (s: string) => (s.startsWith(' ') ? `+${s.slice(1)}` : s)

/** An E.164 number in a body (400 invalid_phone otherwise), canonicalised. */
export const Phone = v.pipe(
  v.string(coded('invalid_phone', PHONE_MESSAGE)),
  v.check((s) => canonicalE164(s) !== null, coded('invalid_phone', PHONE_MESSAGE)),
  v.transform((s) => canonicalE164(s) as string),
  v.description('E.164, e.g. +14155550123'),
)

export const CreateDncBody = v.strictObject({
  phone: Phone,
  reason: v.optional(
    v.nullable(
      v.pipe(v.string('reason must be a string or null.'), v.maxLength(500, 'reason is at most 500 characters.')),
    ),
  ),
})
export type CreateDncBody = v.InferOutput<typeof CreateDncBody>

export const DncParams = v.object({ dnc: Id('dnc') })

/** An E.164 number in a query, where an unencoded + arrives as a space. */
export const QueryPhone = v.pipe(v.string(coded('invalid_phone', PHONE_MESSAGE)), v.transform(plusFromQuery), Phone)

export const DncListQuery = v.strictObject({
  phone: v.optional(QueryPhone),
  limit: Limit(100, 50),
  cursor: Cursor,
})
export type DncListQuery = v.InferOutput<typeof DncListQuery>

export const DncEntry = v.object({
  dnc_id: v.string(),
  account_id: v.string(),
  phone_e164: v.string(),
  reason: v.nullable(v.string()),
  source: v.picklist(DNC_SOURCES),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
})
