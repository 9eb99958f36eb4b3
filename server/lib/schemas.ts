// Shared valibot building blocks. Keep them declarative (pitfall 12): to-json-schema turns them into
// the OpenAPI document, and custom codes travel in the message as `code|text` (see api-error.ts).
import * as v from 'valibot'
import { coded } from './errors'

// Strict ISO-8601 with a time and a zone: 2026-11-22T10:00:00Z, …T10:00:00.123+02:00.
// UTC only, with the trailing Z (contract "Conventions": timestamps are ISO-8601 UTC with a trailing Z, in
// and out); an offset such as +02:00 is refused rather than converted (decisions "Behaviour", Smaller points).
const ISO = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?Z$/

export function isStrictTimestamp(value: string): boolean {
  if (!ISO.test(value)) return false
  const d = new Date(value)
  if (Number.isNaN(d.getTime())) return false
  // Reject calendar overflow (2026-02-30 would roll over to March).
  const [y, m, day] = value.slice(0, 10).split('-').map(Number)
  const probe = new Date(Date.UTC(y, m - 1, day))
  return probe.getUTCMonth() === m - 1 && probe.getUTCDate() === day
}

const TIMESTAMP_MESSAGE = 'Expected an ISO-8601 UTC date-time ending in Z, e.g. 2026-01-31T12:00:00Z.'

/** A date-time input; answers 400 invalid_date otherwise. Output stays the string; use toDate(). */
export const Timestamp = v.pipe(
  v.string(coded('invalid_date', TIMESTAMP_MESSAGE)),
  v.check(isStrictTimestamp, coded('invalid_date', TIMESTAMP_MESSAGE)),
  v.metadata({ format: 'date-time' }),
)

/** Path or query id of the form `<prefix>_<n>`; anything else is 400 invalid_id. */
export const Id = (prefix: string) =>
  v.pipe(
    v.string(coded('invalid_id', `Expected an id of the form ${prefix}_<n>.`)),
    v.regex(new RegExp(`^${prefix}_\\d{1,18}$`), coded('invalid_id', `Expected an id of the form ${prefix}_<n>.`)),
    v.description(`${prefix}_<n>`),
  )

/** Query `limit` arrives as text; a bad value is 400 invalid_limit. */
export const Limit = (max = 100, fallback = 50) =>
  v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,6}$/, coded('invalid_limit', `limit must be an integer from 1 to ${max}.`)),
      v.transform(Number),
      v.minValue(1, coded('invalid_limit', `limit must be an integer from 1 to ${max}.`)),
      v.maxValue(max, coded('invalid_limit', `limit must be an integer from 1 to ${max}.`)),
      // The bounds of the integer the text means, for OpenAPI (the builder types the parameter integer).
      v.metadata({ minimum: 1, maximum: max }),
    ),
    String(fallback),
  )

export const Cursor = v.optional(
  v.pipe(v.string(), v.maxLength(2048, coded('invalid_cursor', 'The cursor is malformed.'))),
)

/** Query booleans are the words true and false; anything else is validation_error (coded, because an
 *  uncoded picklist in a query is an enum filter: unsupported_filter). */
export const QueryBoolean = v.optional(
  v.pipe(
    v.picklist(['true', 'false'], coded('validation_error', 'Expected true or false.')),
    v.transform((s) => s === 'true'),
  ),
)

export const toDate = (s: string) => new Date(s)

/** An account id in a path or query: acc_<n>, or usr_<n> for the same tenant (normalised to acc_). */
export const AccountId = v.pipe(
  v.string(),
  v.regex(/^(acc|usr)_\d{1,18}$/, coded('invalid_id', 'Expected an id of the form acc_<n>.')),
  v.transform((s) => s.replace(/^usr_/, 'acc_')),
  v.description('acc_<n> (usr_<n> names the same tenant)'),
)

/** Keys valibot's record drops without a word (its guard against prototype pollution). */
const DROPPED_KEYS = ['__proto__', 'constructor', 'prototype']

/**
 * v.record that refuses what valibot's record lets through silently (found by the issue 19 fuzz): a JSON
 * array (`external_ids: ["a"]` became {"0": "a"}) and the keys __proto__, constructor and prototype (dropped
 * from the output, so the client's data vanished with a 2xx). Every record in the schemas goes through this.
 */
export function JsonRecord<
  const K extends v.BaseSchema<string, string | number | symbol, v.BaseIssue<unknown>>,
  const V extends v.BaseSchema<unknown, unknown, v.BaseIssue<unknown>>,
>(key: K, value: V, message?: string): v.RecordSchema<K, V, undefined> {
  const inner = message ? v.record(key, value, message) : v.record(key, value)
  return {
    ...inner,
    '~run'(dataset, config) {
      const input = dataset.value
      const isArray = Array.isArray(input)
      const dropped =
        !isArray && input && typeof input === 'object' ? DROPPED_KEYS.find((k) => Object.hasOwn(input, k)) : undefined
      if (!isArray && dropped === undefined) return inner['~run'](dataset, config)
      // The record's own type issue (as for null), told what it was really given.
      const out = inner['~run']({ value: null } as typeof dataset, config)
      for (const issue of out.issues ?? []) {
        Object.assign(
          issue,
          isArray
            ? { input, received: 'Array', message: message ?? 'Invalid type: Expected Object but received Array' }
            : {
                input: dropped,
                kind: 'schema',
                received: `"${dropped}"`,
                message: `The key "${dropped}" is not accepted.`,
                path: [{ type: 'object', origin: 'key', input, key: dropped, value: (input as any)[dropped!] }],
              },
        )
      }
      return out
    },
  } as v.RecordSchema<K, V, undefined>
}
