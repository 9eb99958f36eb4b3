// Redaction (decisions "Redaction"): e-mail addresses, phone numbers, card numbers (only when the
// digits pass the Luhn check) and IBANs are masked; each masked value keeps its last 2 characters and
// every other character becomes "*". Pure functions, no I/O.

export const REDACTION_RULES = ['email', 'phone', 'card_number', 'iban'] as const
export type RedactionRule = (typeof REDACTION_RULES)[number]

// E-mail: what /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g matches, found by emailSpans in linear time.
// IBAN: country code, 2 check digits, 11–30 alphanumerics, optionally grouped by single spaces.
const IBAN = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g
// Card: 13–19 digits, optionally grouped by single spaces or hyphens.
const CARD = /\b\d(?:[ -]?\d){12,18}\b/g
// Phone: an optional +, then 7–15 digits with spaces, dots, hyphens or parentheses between them.
const PHONE = /(?:\+|\b)\d(?:[\s.()-]{0,2}\d){6,14}\b/g

const isAlpha = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
const isAlnum = (c: number) => isAlpha(c) || (c >= 48 && c <= 57)
// [A-Za-z0-9._%+-] and [A-Za-z0-9.-]
const isLocal = (c: number) => isAlnum(c) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45
const isDomain = (c: number) => isAlnum(c) || c === 46 || c === 45

/**
 * The [start, end) spans the global e-mail pattern above would match, left to right. As a regular expression
 * it retried from every character of a long run of address characters and took time quadratic in the text
 * (decisions "Hostile input"); here each run is read a bounded number of times. The match around an @ is the
 * run of local characters before it (from the end of the previous match) and, after it, the domain run up to
 * its last ".xx" with letters after the dot.
 */
export function emailSpans(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = []
  let from = 0
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at
    while (start > from && isLocal(text.charCodeAt(start - 1))) start--
    if (start === at) continue
    let runEnd = at + 1
    while (runEnd < text.length && isDomain(text.charCodeAt(runEnd))) runEnd++
    let end = -1
    for (let dot = runEnd - 3; dot >= at + 2; dot--) {
      if (text.charCodeAt(dot) !== 46 || !isAlpha(text.charCodeAt(dot + 1)) || !isAlpha(text.charCodeAt(dot + 2)))
        continue
      end = dot + 3
      while (end < runEnd && isAlpha(text.charCodeAt(end))) end++
      break
    }
    if (end < 0) continue
    spans.push([start, end])
    from = end
  }
  return spans
}

function replaceEmails(text: string, replace: (m: string) => string): string {
  const spans = emailSpans(text)
  if (!spans.length) return text
  let out = ''
  let last = 0
  for (const [start, end] of spans) {
    out += text.slice(last, start) + replace(text.slice(start, end))
    last = end
  }
  return out + text.slice(last)
}

/** Luhn checksum over the digits of `s`. */
export function luhnValid(s: string): boolean {
  const digits = s.replace(/\D/g, '')
  if (digits.length < 13 || digits.length > 19) return false
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48
    if (i % 2 === 1) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return sum % 10 === 0
}

/** ISO 13616 mod-97 check of an IBAN (spaces ignored). */
export function ibanValid(s: string): boolean {
  const iban = s.replace(/ /g, '').toUpperCase()
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false
  const moved = iban.slice(4) + iban.slice(0, 4)
  let rem = 0
  for (const ch of moved) {
    const n = ch >= 'A' ? String(ch.charCodeAt(0) - 55) : ch
    for (const c of n) rem = (rem * 10 + (c.charCodeAt(0) - 48)) % 97
  }
  return rem === 1
}

/** Replaces every character but the last 2 with "*" (the length stays visible). */
export function mask(value: string): string {
  const chars = [...value]
  return chars.map((c, i) => (i < chars.length - 2 ? '*' : c)).join('')
}

export interface RedactResult {
  text: string
  rules: Set<RedactionRule>
}

/**
 * Redacts one text. Order matters: e-mails first (they may hold digits), then IBANs, then card numbers
 * (Luhn-valid only), then phone numbers, so a card number is never half-masked as a phone.
 */
export function redactText(text: string, rules: Set<RedactionRule> = new Set()): RedactResult {
  let out = replaceEmails(text, (m) => {
    rules.add('email')
    return mask(m)
  })
  out = out.replace(IBAN, (m) => {
    if (!ibanValid(m)) return m
    rules.add('iban')
    return mask(m)
  })
  out = out.replace(CARD, (m) => {
    if (!luhnValid(m)) return m
    rules.add('card_number')
    return mask(m)
  })
  out = out.replace(PHONE, (m) => {
    if (m.includes('*')) return m
    // With a leading + from 7 digits; without one from 10, so dates (8 digits) and short numbers stay.
    const digits = m.replace(/\D/g, '').length
    if (digits > 15 || digits < (m.startsWith('+') ? 7 : 10)) return m
    rules.add('phone')
    return mask(m)
  })
  return { text: out, rules }
}

/** Redacts every string inside a JSON value (summary, identity), keeping its shape. */
export function redactValue<T>(value: T, rules: Set<RedactionRule>): T {
  if (typeof value === 'string') return redactText(value, rules).text as T
  if (Array.isArray(value)) return value.map((x) => redactValue(x, rules)) as T
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, redactValue(x, rules)])) as T
  return value
}

/** The applied rules in their canonical order. */
export const rulesList = (rules: Set<RedactionRule>): RedactionRule[] => REDACTION_RULES.filter((r) => rules.has(r))
