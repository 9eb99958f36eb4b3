// What makes a capability's intents usable (intents.ts): the host checks them as it registers a capability,
// so a bad pattern or an argument the capability does not take stops the boot instead of failing a visitor's
// turn, and the contract suites (./testing) run the same check. Patterns compile on RE2 (re2js), whose
// matching time is linear in the text, so no pattern a plugin author writes can stall the host on what a
// visitor types.
import { toJsonSchema } from '@valibot/to-json-schema'
import { RE2JS } from 're2js'
import type { Capability } from './capability.ts'
import type { CapabilityIntent, IntentFill } from './intents.ts'

/** Only this much of a visitor's message is matched against intents. */
export const INTENT_TEXT_MAX = 2_000
/** Beyond this many RE2 instructions a pattern is refused: with the text bound, it bounds a match's cost. */
export const INTENT_PROGRAM_MAX = 2_000
/** All of one capability's patterns together: a turn runs each of them over the message. */
export const INTENT_PROGRAM_TOTAL_MAX = 5_000
const PATTERN_MAX = 2_000
const EXAMPLES_MAX = 100
const EXAMPLE_MAX = 500
const INTENTS_MAX = 50
export const INTENT_FILLS: readonly IntentFill[] = ['email', 'phone', 'name', 'message']
const INTENT_KEYS = new Set(['examples', 'pattern', 'arguments', 'fill', 'oneOf'])

const compiled = new Map<string, RE2JS | string>()

/** The pattern compiled case-insensitively on RE2, or why it cannot be (cached: patterns come from plugins). */
export function compileIntentPattern(source: string): RE2JS | string {
  let hit = compiled.get(source)
  if (hit === undefined) {
    hit = compile(source)
    compiled.set(source, hit)
  }
  return hit
}

function compile(source: string): RE2JS | string {
  if (source.length > PATTERN_MAX) return `its pattern is longer than ${PATTERN_MAX} characters`
  try {
    const re = RE2JS.compile(source, RE2JS.CASE_INSENSITIVE)
    const size = re.programSize()
    if (size > INTENT_PROGRAM_MAX)
      return `its pattern is too complex (${size} RE2 instructions, at most ${INTENT_PROGRAM_MAX}); use smaller repeat counts`
    return re
  } catch (err) {
    const why = err instanceof Error ? err.message.replace(/^error parsing regexp:\s*/, '') : 'invalid pattern'
    return `its pattern is not RE2 syntax (no lookaround or backreferences): ${why.slice(0, 200)}`
  }
}

/** The parameter names a capability takes, as its JSON Schema (what engines see) lists them. */
export function parameterNames(c: Capability): string[] {
  const schema = toJsonSchema(c.parameters, { errorMode: 'ignore' }) as { properties?: Record<string, unknown> }
  return Object.keys(schema.properties ?? {})
}

/** Each problem of a capability's intents, as "intent 2: …"; none when they are usable. */
export function intentProblems(c: Capability): string[] {
  const intents = (c as { intents?: unknown }).intents
  if (intents === undefined) return []
  if (!Array.isArray(intents)) return ['intents must be a list']
  if (intents.length > INTENTS_MAX) return [`at most ${INTENTS_MAX} intents`]
  const params = parameterNames(c)
  const known = `(parameters: ${params.join(', ') || 'none'})`
  const problems: string[] = []
  let total = 0
  for (const [i, raw] of intents.entries()) {
    const say = (p: string) => problems.push(`intent ${i + 1}: ${p}`)
    if (!raw || typeof raw !== 'object') {
      say('must be an object')
      continue
    }
    const intent = raw as CapabilityIntent
    for (const k of Object.keys(intent))
      if (!INTENT_KEYS.has(k)) say(`unknown key "${k}" (known: ${[...INTENT_KEYS].join(', ')})`)
    if (intent.pattern === undefined && !intent.examples?.length) say('needs a pattern or examples')
    if (intent.pattern !== undefined) {
      if (typeof intent.pattern !== 'string' || !intent.pattern) say('its pattern must be a non-empty string')
      else {
        const re = compileIntentPattern(intent.pattern)
        if (typeof re === 'string') say(re)
        else {
          total += re.programSize()
          for (const group of Object.keys(re.namedGroups()))
            if (!params.includes(group)) say(`its pattern's group "${group}" is not a parameter ${known}`)
        }
      }
    }
    if (intent.examples !== undefined) {
      if (!Array.isArray(intent.examples) || intent.examples.length > EXAMPLES_MAX)
        say(`examples must be a list of at most ${EXAMPLES_MAX} strings`)
      else
        for (const e of intent.examples)
          if (typeof e !== 'string' || e.length > EXAMPLE_MAX || !/\p{L}{2}/u.test(e))
            say(`example ${JSON.stringify(String(e).slice(0, 60))} must be words, at most ${EXAMPLE_MAX} characters`)
    }
    const keysOf = (what: string, value: unknown) => {
      if (value === undefined) return []
      if (!value || typeof value !== 'object' || Array.isArray(value)) {
        say(`${what} must be an object`)
        return []
      }
      return Object.keys(value)
    }
    for (const k of keysOf('arguments', intent.arguments))
      if (!params.includes(k)) say(`argument "${k}" is not a parameter ${known}`)
    for (const k of keysOf('fill', intent.fill)) {
      if (!params.includes(k)) say(`fill "${k}" is not a parameter ${known}`)
      const how = intent.fill?.[k]
      if (!INTENT_FILLS.includes(how as IntentFill))
        say(`fill "${k}" reads "${String(how)}", not one of ${INTENT_FILLS.join(', ')}`)
    }
    if (intent.oneOf !== undefined) {
      if (!Array.isArray(intent.oneOf) || !intent.oneOf.length) say('oneOf must be a non-empty list of parameters')
      else for (const k of intent.oneOf) if (!params.includes(k)) say(`oneOf "${k}" is not a parameter ${known}`)
    }
  }
  if (total > INTENT_PROGRAM_TOTAL_MAX)
    problems.push(
      `its patterns together are too complex (${total} RE2 instructions, at most ${INTENT_PROGRAM_TOTAL_MAX})`,
    )
  return problems
}
