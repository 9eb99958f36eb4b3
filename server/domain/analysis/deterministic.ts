// The deterministic extraction of analysis values (decisions "Conversation analysis"): the local engine's
// extract(), and the host's own for an engine without one. It reads visitor turns only and takes words as
// they stand: an e-mail address, a phone number, a date, a number said about the field, a yes or no answering
// an agent question that names the field, an enum value named verbatim. Anything else stays null: it never
// guesses. Every pattern is linear (no nested quantifiers) and turns are bounded in length by the chat routes.
import { NUMBER_WORDS } from '~/lib/cues'
import type { AnalysisField, ExtractRequest, ExtractResult, ExtractedValue } from '~/kit/chat-engine'

type Turn = ExtractRequest['turns'][number]
interface Span {
  start: number
  end: number
  value: string | number | boolean
}

const EMAIL = /(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}/gu
const PHONE = /(?:\+\d|\b\d)[\d ().-]{5,18}\d\b/g
const ISO_DATE = /\b(\d{4})-(\d{2})-(\d{2})\b/g
const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
]
const MONTH = `(${MONTHS.join('|')})`
const MONTH_FIRST = new RegExp(`\\b${MONTH}\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, 'gi')
const DAY_FIRST = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH},?\\s+(\\d{4})\\b`, 'gi')
const NUMBER = /(?<![\w.,-])\d{1,12}(?:\.\d{1,6})?(?![\w]|[.,]\d)/g
const NUMBER_WORD = new RegExp(`\\b(${NUMBER_WORDS.join('|')})\\b`, 'gi')
const YES = /^[\s"'(]*(yes|yeah|yep|yup|sure|correct|absolutely|of course|indeed|i am|i do|we are|we do)\b/i
const NO = /^[\s"'(]*(no|nope|not really|not yet|never|i am not|i'm not|i don't|i do not|we are not|we don't)\b/i

const all = (re: RegExp, text: string) => [...text.matchAll(re)]

/** The words of a field's name (3 letters or more) that a turn must all name to be about the field. */
export const keywordsOf = (field: Pick<AnalysisField, 'name'>) =>
  field.name
    .toLowerCase()
    .split('_')
    .filter((w) => w.length >= 3)

/** Every keyword begins a word of `text` (so "guests" names "guest"); a field without keywords names nothing. */
export function names(text: string, keywords: string[]): boolean {
  if (!keywords.length) return false
  const lower = text.toLowerCase()
  return keywords.every((k) => new RegExp(`(?<![a-z0-9])${k}`).test(lower))
}

const isoOf = (y: number, m: number, d: number): string | null => {
  const t = new Date(Date.UTC(y, m - 1, d))
  if (t.getUTCFullYear() !== y || t.getUTCMonth() !== m - 1 || t.getUTCDate() !== d) return null
  return t.toISOString().slice(0, 10)
}

function dates(text: string): Span[] {
  const out: Span[] = []
  const push = (m: RegExpMatchArray, iso: string | null) => {
    if (iso) out.push({ start: m.index!, end: m.index! + m[0].length, value: iso })
  }
  for (const m of all(ISO_DATE, text)) push(m, isoOf(+m[1], +m[2], +m[3]))
  for (const m of all(MONTH_FIRST, text)) push(m, isoOf(+m[3], MONTHS.indexOf(m[1].toLowerCase()) + 1, +m[2]))
  for (const m of all(DAY_FIRST, text)) push(m, isoOf(+m[3], MONTHS.indexOf(m[2].toLowerCase()) + 1, +m[1]))
  return out.sort((a, b) => a.start - b.start)
}

function emails(text: string): Span[] {
  return all(EMAIL, text).map((m) => ({ start: m.index!, end: m.index! + m[0].length, value: m[0] }))
}

function phones(text: string): Span[] {
  return all(PHONE, text)
    .filter((m) => {
      // As redaction counts them: with a leading + from 7 digits, without from 10 (a date has 8).
      const digits = m[0].replace(/\D/g, '').length
      return digits <= 15 && digits >= (m[0].startsWith('+') ? 7 : 10)
    })
    .map((m) => ({ start: m.index!, end: m.index! + m[0].length, value: m[0] }))
}

/** Numbers that are not part of an e-mail, a phone number or a date in the same turn. */
function numbers(text: string): Span[] {
  const taken = [...emails(text), ...phones(text), ...dates(text)]
  const free = (s: number, e: number) => !taken.some((t) => s < t.end && e > t.start)
  const out: Span[] = []
  for (const m of all(NUMBER, text))
    if (free(m.index!, m.index! + m[0].length))
      out.push({ start: m.index!, end: m.index! + m[0].length, value: Number(m[0]) })
  for (const m of all(NUMBER_WORD, text))
    if (free(m.index!, m.index! + m[0].length))
      out.push({ start: m.index!, end: m.index! + m[0].length, value: NUMBER_WORDS.indexOf(m[1].toLowerCase()) })
  return out.sort((a, b) => a.start - b.start)
}

function enumValues(text: string, values: string[]): Span[] {
  const lower = text.toLowerCase()
  const out: Span[] = []
  for (const value of values) {
    const v = value.toLowerCase()
    if (!v) continue
    for (let at = lower.indexOf(v); at >= 0; at = lower.indexOf(v, at + 1)) {
      const before = at === 0 ? '' : lower[at - 1]
      const after = lower[at + v.length] ?? ''
      // Named verbatim as a word: "pro" is not found inside "produce".
      if (!/[\p{L}\p{N}]/u.test(before) && !/[\p{L}\p{N}]/u.test(after)) {
        out.push({ start: at, end: at + v.length, value })
        break
      }
    }
  }
  return out.sort((a, b) => a.start - b.start || b.end - a.end)
}

/** A yes or no opening the visitor's answer; the span is the answering words. */
function answer(text: string): Span | null {
  for (const [re, value] of [
    [NO, false],
    [YES, true],
  ] as const) {
    const m = re.exec(text)
    if (m) {
      const start = m.index + m[0].length - m[1].length
      return { start, end: start + m[1].length, value }
    }
  }
  return null
}

/** What the field holds, judged from its type and, for strings, its name and description. */
function kindOf(f: AnalysisField): 'email' | 'phone' | 'date' | 'number' | 'boolean' | 'enum' | null {
  if (f.type !== 'string') return f.type
  const about = (s: string) =>
    /e-?mail/i.test(s) ? 'email' : /phone|mobile|telephone|callback number/i.test(s) ? 'phone' : null
  return about(f.name) ?? about(f.description)
}

const found = (turn: Turn, s: Span): ExtractedValue => ({
  value: s.value,
  quote: turn.text.slice(s.start, s.end),
  turnIndex: turn.index,
  start: s.start,
})

function extractField(field: AnalysisField, turns: Turn[]): ExtractedValue {
  const none: ExtractedValue = { value: null, quote: null }
  const kind = kindOf(field)
  if (!kind) return none
  const keywords = keywordsOf(field)
  const visitor = turns.filter((t) => t.speaker === 'visitor')
  // The agent turn a visitor turn answers: the nearest agent turn before it (one pass, not one search a turn).
  const before = new Map<number, Turn | undefined>()
  let last: Turn | undefined
  for (const t of turns) {
    before.set(t.index, last)
    if (t.speaker === 'agent') last = t
  }
  const asked = (t: Turn) => before.get(t.index)
  const about = (t: Turn) => names(t.text, keywords) || names(asked(t)?.text ?? '', keywords)
  const relevant = visitor.filter(about)
  const first = (pool: Turn[], spans: (text: string) => Span[]) => {
    for (const t of pool) {
      const s = spans(t.text)[0]
      if (s) return found(t, s)
    }
    return null
  }
  switch (kind) {
    case 'email':
      return first(relevant, emails) ?? first(visitor, emails) ?? none
    case 'phone':
      return first(relevant, phones) ?? first(visitor, phones) ?? none
    case 'date':
      return first(relevant, dates) ?? first(visitor, dates) ?? none
    case 'number':
      // A bare number is only this field's when the turn (or the question it answers) names the field.
      return first(relevant, numbers) ?? none
    case 'enum':
      return (
        first(relevant, (x) => enumValues(x, field.enum ?? [])) ??
        first(visitor, (x) => enumValues(x, field.enum ?? [])) ??
        none
      )
    case 'boolean':
      for (const t of visitor) {
        const q = asked(t)
        if (!q?.text.includes('?') || !names(q.text, keywords)) continue
        const a = answer(t.text)
        if (a) return found(t, a)
      }
      return none
  }
}

/** The deterministic extraction of every field; success per decisions (required fields found). */
export function extractDeterministic(req: ExtractRequest): ExtractResult {
  const values: Record<string, ExtractedValue> = {}
  for (const f of req.fields) values[f.name] = extractField(f, req.turns)
  const required = req.fields.filter((f) => f.required)
  // It cannot judge free-text criteria: with criteria, success means every required field was found.
  const success = req.successCriteria && required.length ? required.every((f) => values[f.name].value !== null) : null
  return { values, success, usage: { input: 0, output: 0 }, model: 'local-extract-1' }
}
