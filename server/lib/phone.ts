// Phone numbers in what a visitor writes and in the arguments of capabilities, read by libphonenumber rather
// than a digit pattern: "2027-02-01", "19:30" or an order number "20270201" are no phone numbers.
import {
  findPhoneNumbersInText,
  getCountries,
  Metadata,
  parsePhoneNumberFromString,
  type CountryCode,
  type PhoneNumber,
} from 'libphonenumber-js'
import * as v from 'valibot'

/** Visitor text is cut before it is scanned. */
const MAX_SCAN = 2_000
// Dates (2027-02-01, 01/02/2027, 1.2.27) and times (19:30) have the characters of a phone number.
const DATE_OR_TIME = /^\s*(?:\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|\d{1,2}:\d{2}(?::\d{2})?)\s*$/
// What a written phone number is made of; anything else (letters, #, ,) is not one.
const PHONE_CHARS = /^\s*\+?[\d\s().-]{6,24}\s*$/
// Candidates in free text: a run of digits and separators, a + or ( before it, not glued to a word.
const CANDIDATES = /(?<![\w+(])(?:\+|\()?\d[\d\s().-]{5,22}\d\b/g
/** At most this many candidates of one text are read (each costs a few parses). */
const MAX_CANDIDATES = 8

// Each region's trunk prefix (0 in most, 8, 06; 1 only in North America, where a bare 1 would otherwise let
// the Marshall Islands read any 8 digits after a 1). Regions without one dial national numbers bare: those
// need the conversation's region, which a capability's arguments do not carry.
const TRUNK: { region: CountryCode; prefix: string }[] = (() => {
  const metadata = new Metadata()
  const out: { region: CountryCode; prefix: string }[] = []
  for (const region of getCountries()) {
    metadata.selectNumberingPlan(region)
    // Present at run time, missing from the package's types.
    const plan = metadata.numberingPlan as unknown as { nationalPrefix(): string | undefined; callingCode(): string }
    const prefix = plan.nationalPrefix()
    if (prefix && (prefix !== '1' || plan.callingCode() === '1')) out.push({ region, prefix })
  }
  return out
})()

/**
 * The phone number a string holds, or null. International (+44 …, 0044 …): valid per libphonenumber. National
 * (no country code): valid in some region when read with that region's trunk prefix (020 7946 0958 in GB,
 * 06 12 34 56 78 in FR) or as a ten-digit North American number ((202) 555-0143). Without the conversation's
 * region a bare run of digits is ambiguous, so a national number without its trunk prefix is refused: an
 * order number such as 20270201 would otherwise be valid in 26 regions.
 */
export function readPhone(value: string): PhoneNumber | null {
  if (!PHONE_CHARS.test(value) || DATE_OR_TIME.test(value)) return null
  const text = value.trim()
  const digits = text.replace(/\D/g, '')
  if (digits.length < 7 || digits.length > 15 + 2) return null
  if (text.startsWith('+') || digits.startsWith('00')) {
    const n = parsePhoneNumberFromString(text.startsWith('+') ? text : `+${digits.slice(2)}`)
    return n?.isValid() ? n : null
  }
  if (digits.length === 10) {
    const n = parsePhoneNumberFromString(text, 'US')
    if (n?.isValid()) return n
  }
  for (const { region, prefix } of TRUNK) {
    if (!digits.startsWith(prefix)) continue
    const n = parsePhoneNumberFromString(text, region)
    // The prefix was read as a trunk prefix (not as the number's own first digits).
    if (n?.isValid() && digits.length > n.nationalNumber.length) return n
  }
  return null
}

/** Whether a capability's phone argument is a phone number (readPhone). */
export const isPhoneNumber = (value: string) => readPhone(value) !== null

/** The first phone number written in a text, as written (trimmed), or null. */
export function phoneIn(text: string): string | null {
  const t = text.slice(0, MAX_SCAN)
  const found: { at: number; text: string }[] = []
  // International numbers as libphonenumber finds them (it also skips dates and times in running text).
  for (const f of findPhoneNumbersInText(t))
    if (f.number.isValid()) found.push({ at: f.startsAt, text: t.slice(f.startsAt, f.endsAt) })
  let read = 0
  for (const m of t.matchAll(CANDIDATES)) {
    if (++read > MAX_CANDIDATES) break
    if (readPhone(m[0])) found.push({ at: m.index, text: m[0].trim() })
  }
  found.sort((a, b) => a.at - b.at)
  return found[0]?.text ?? null
}

/** A capability's phone argument: international, or national with its trunk prefix (readPhone). */
export const PhoneArgument = v.pipe(
  v.string(),
  v.maxLength(30),
  v.check(
    isPhoneNumber,
    'Not a phone number: give it with its country code (+44 20 7946 0958) or its trunk prefix (020 7946 0958).',
  ),
)
