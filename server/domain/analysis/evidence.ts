// The server's own check of every extracted value (decisions "Conversation analysis"): a value is kept only
// with the words it came from, found by the server in the stored turn text, and only when it is of the
// field's type. Evidence offsets index the stored text, so `text.slice(start, end)` is those words. An engine
// (a model) may say anything; nothing it says is stored unless the transcript holds it.
import type { AnalysisField, ExtractedValue, ExtractRequest } from '~/kit/chat-engine'
import { NUMBER_WORDS } from '~/lib/cues'

type Turn = ExtractRequest['turns'][number]
export interface Evidence {
  turn_index: number
  start: number
  end: number
}
export type Value = string | number | boolean | null

/** The value as the field's type holds it, or null when it is not of that type. */
export function coerce(field: AnalysisField, raw: unknown): Value {
  if (raw === null || raw === undefined) return null
  switch (field.type) {
    case 'number': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() ? Number(raw) : Number.NaN
      return Number.isFinite(n) ? n : null
    }
    case 'boolean':
      return typeof raw === 'boolean' ? raw : raw === 'true' ? true : raw === 'false' ? false : null
    case 'enum': {
      const s = String(raw).toLowerCase()
      return (field.enum ?? []).find((e) => e.toLowerCase() === s) ?? null
    }
    case 'date': {
      if (typeof raw !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(raw)) return null
      const t = new Date(`${raw}T00:00:00Z`)
      return !Number.isNaN(t.getTime()) && t.toISOString().slice(0, 10) === raw ? raw : null
    }
    case 'string': {
      const s = typeof raw === 'string' ? raw.trim() : typeof raw === 'number' ? String(raw) : ''
      return s && s.length <= 1_000 ? s : null
    }
  }
}

/** Where `needle` stands in `text`: exactly, else ignoring case (when case folding keeps the length). */
function indexIn(text: string, needle: string, from = 0): number {
  const exact = text.indexOf(needle, from)
  if (exact >= 0) return exact
  const lower = text.toLowerCase()
  return lower.length === text.length ? lower.indexOf(needle.toLowerCase(), from) : -1
}

/** The quote's place in the turns: where the engine says when that holds, else visitor turns first. */
function locateQuote(turns: Turn[], x: ExtractedValue): Evidence | null {
  const quote = x.quote ?? ''
  if (!quote.trim()) return null
  const named = turns.find((y) => y.index === x.turnIndex)
  if (named && x.start !== undefined && named.text.slice(x.start, x.start + quote.length) === quote)
    return { turn_index: named.index, start: x.start, end: x.start + quote.length }
  // The turn the engine named first, then visitor turns, then the agent's.
  const ordered = [
    ...(named ? [named] : []),
    ...turns.filter((t) => t.speaker === 'visitor'),
    ...turns.filter((t) => t.speaker !== 'visitor'),
  ]
  for (const t of ordered) {
    const at = indexIn(t.text, quote)
    if (at >= 0) return { turn_index: t.index, start: at, end: at + quote.length }
  }
  return null
}

/**
 * One field's stored result: the value with its evidence, or null with none. A string or enum value must
 * itself stand in the quote, and the evidence is narrowed to it; other types keep the quote's span (a number
 * said in words, a yes answering the question).
 */
export function withEvidence(
  field: AnalysisField,
  turns: Turn[],
  x: ExtractedValue | undefined,
): { value: Value; evidence: Evidence[] } {
  const none = { value: null, evidence: [] }
  if (!x) return none
  const value = coerce(field, x.value)
  if (value === null) return none
  const span = locateQuote(turns, x)
  if (!span) return none
  const text = turns.find((t) => t.index === span.turn_index)!.text
  if (field.type === 'string' || field.type === 'enum') {
    const at = indexIn(text.slice(0, span.end), String(value), span.start)
    if (at < 0) return none
    return { value, evidence: [{ turn_index: span.turn_index, start: at, end: at + String(value).length }] }
  }
  if (field.type === 'number') {
    // Narrowed to the digits when the quote holds them as written.
    const digits = String(value)
    const at = indexIn(text.slice(0, span.end), digits, span.start)
    if (at >= 0) return { value, evidence: [{ turn_index: span.turn_index, start: at, end: at + digits.length }] }
    // Else the quote must say it in words ("a party of four"); a number the words do not hold is refused.
    const word = NUMBER_WORDS[value as number]
    if (!word || !new RegExp(`\\b${word}\\b`, 'i').test(text.slice(span.start, span.end))) return none
  }
  return { value, evidence: [span] }
}
