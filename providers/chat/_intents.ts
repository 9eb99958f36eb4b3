// The local engine's tool rule (a helper file, not a plugin): a tool is called when one of its intents
// (kit/intents.ts) matches the visitor's message and the arguments it yields hold what the tool requires.
import type { ToolCall, ToolSpec } from '~/kit/chat-engine'
import type { CapabilityIntent, IntentFill } from '~/kit/intents'
import { compileIntentPattern, INTENT_TEXT_MAX } from '~/domain/plugins/intents'
import { phoneIn } from '~/lib/phone'
import { NUMBER_WORDS } from '~/lib/cues'
import { EMAIL, tokens } from './_text'

// Case-sensitive on purpose: the name itself must be capitalised, which keeps "I'm happy" from becoming a name.
export const NAME_OF = /\b(?:[Mm]y name is|I am|I'm|[Tt]his is)\s+(\p{Lu}[\p{L}'-]+(?:\s+\p{Lu}[\p{L}'-]+)?)/u

interface Candidate {
  call: ToolCall
  /** A pattern match (2) outranks an example match (the share of its words found, at most 1). */
  score: number
}

/**
 * The call of the tool whose intent matches best (a pattern before an example; then the tools' order), or
 * null. Only the first INTENT_TEXT_MAX characters are read; patterns run on RE2 (linear time).
 */
export function intentCall(tools: readonly ToolSpec[], message: string): ToolCall | null {
  const text = message.slice(0, INTENT_TEXT_MAX)
  let words: Set<string> | undefined
  const filled = new Map<IntentFill, string | undefined>()
  const fill = (how: IntentFill) => {
    if (!filled.has(how)) filled.set(how, read(how, text))
    return filled.get(how)
  }
  let best: Candidate | null = null
  for (const tool of tools) {
    for (const intent of tool.intents ?? []) {
      const hit = matchOf(intent, text, () => (words ??= new Set(tokens(text))))
      if (!hit || (best && best.score >= hit.score)) continue
      const args: Record<string, unknown> = { ...intent.arguments }
      for (const [k, how] of Object.entries(intent.fill ?? {})) {
        const value = fill(how)
        if (value !== undefined) args[k] = value
      }
      Object.assign(args, hit.groups)
      const call = callOf(tool, intent, args)
      if (call) best = { call, score: hit.score }
    }
  }
  return best?.call ?? null
}

function matchOf(
  intent: CapabilityIntent,
  text: string,
  words: () => Set<string>,
): { score: number; groups: Record<string, string> } | null {
  if (intent.pattern) {
    const re = compileIntentPattern(intent.pattern)
    // A pattern the registration refused never reaches a turn; a tool spec built elsewhere is skipped.
    if (typeof re !== 'string') {
      const m = re.matcher(text)
      if (m.find()) {
        const groups: Record<string, string> = {}
        for (const name of Object.keys(re.namedGroups())) {
          const value = m.group(name)?.replace(/\s+/g, ' ').trim()
          if (value) groups[name] = value
        }
        return { score: 2, groups }
      }
    }
  }
  let score = 0
  for (const example of intent.examples ?? []) {
    const wanted = [...new Set(tokens(example))]
    if (!wanted.length) continue
    const found = wanted.filter((w) => words().has(w)).length
    const needed = wanted.length <= 2 ? wanted.length : Math.max(2, Math.ceil((wanted.length * 2) / 3))
    if (found >= needed) score = Math.max(score, found / wanted.length)
  }
  return score ? { score, groups: {} } : null
}

function read(how: IntentFill, text: string): string | undefined {
  switch (how) {
    case 'email':
      return text.match(EMAIL)?.[0]
    case 'phone':
      return phoneIn(text) ?? undefined
    case 'name':
      return text.match(NAME_OF)?.[1]
    case 'message':
      return text.trim() || undefined
  }
}

/** The call, its arguments converted to the declared types, when it holds what the tool requires. */
function callOf(tool: ToolSpec, intent: CapabilityIntent, args: Record<string, unknown>): ToolCall | null {
  const schema = tool.parameters as { properties?: Record<string, { type?: unknown }>; required?: unknown }
  const properties = schema.properties
  const out: Record<string, unknown> = {}
  for (const [k, value] of Object.entries(args)) {
    // A tool that declares its parameters gets only those.
    if (properties && !(k in properties)) continue
    const converted = convert(value, properties?.[k]?.type)
    if (converted === undefined) return null
    out[k] = converted
  }
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : []
  if (required.some((k) => out[k] === undefined)) return null
  if (intent.oneOf && !intent.oneOf.some((k) => out[k] !== undefined)) return null
  return { name: tool.name, arguments: out }
}

/** A captured string as the parameter's JSON Schema type; undefined when it cannot be one. */
function convert(value: unknown, type: unknown): unknown {
  if (typeof value !== 'string') return value
  if (type === 'integer' || type === 'number') {
    const word = NUMBER_WORDS.indexOf(value.toLowerCase())
    const n = word >= 0 ? word : Number(value.replace(',', '.'))
    if (!Number.isFinite(n) || (type === 'integer' && !Number.isInteger(n))) return undefined
    return n
  }
  if (type === 'boolean') {
    if (/^(?:yes|true|y)$/i.test(value)) return true
    if (/^(?:no|false|n)$/i.test(value)) return false
    return undefined
  }
  return value
}
