// {{variable}} placeholders of an outbound profile. A placeholder is exactly `{{name}}` with a name of
// [a-z_][a-z0-9_]{0,63} (no spaces inside the braces); anything else between braces stays literal text.
// Scans are bounded: the length of the text is checked before the (linear, non-overlapping) pattern runs.
import { Errors, apiError } from '~/lib/errors'

export const MAX_ROLE = 8000
export const MAX_GREETING = 1000
/** The built prompt: the engine's instructions plus the goal; generous, still bounded. */
export const MAX_PROMPT = 64_000
export const MAX_VARIABLES = 50
export const MAX_VARIABLE_VALUE = 1000

const PLACEHOLDER = /\{\{([a-z_][a-z0-9_]{0,63})\}\}/g

/** Distinct placeholder names of the texts, in order of first appearance. Callers bound the lengths. */
export function placeholdersOf(...texts: (string | null | undefined)[]): string[] {
  const seen = new Set<string>()
  for (const text of texts) {
    if (!text) continue
    for (const m of text.matchAll(PLACEHOLDER)) seen.add(m[1])
  }
  return [...seen]
}

export interface FillableProfile {
  role: string
  greeting: string | null
  /** The built outbound prompt (the profile's prompt version); null before the first build. */
  prompt?: string | null
}

function bounded(field: string, text: string, max: number) {
  if (text.length > max) throw Errors.validation(field, `${field} is longer than ${max} characters.`)
}

/**
 * Fills the {{name}} placeholders of role, greeting and prompt from a call's variables. A placeholder
 * with no value (no own key) is 400 missing_variable with field `variables.<name>`; a value longer than
 * MAX_VARIABLE_VALUE is 400 validation_error on that field. Extra variables are ignored. Without a built
 * prompt, `prompt` is the filled role.
 */
export function fillProfile(
  profile: FillableProfile,
  variables: Record<string, string>,
): { role: string; greeting: string | null; prompt: string } {
  bounded('role', profile.role, MAX_ROLE)
  if (profile.greeting !== null) bounded('greeting', profile.greeting, MAX_GREETING)
  const prompt = profile.prompt ?? null
  if (prompt !== null) bounded('prompt', prompt, MAX_PROMPT)
  const value = (name: string): string => {
    if (!Object.hasOwn(variables, name) || typeof variables[name] !== 'string') {
      throw apiError('missing_variable', `The profile needs the variable "${name}".`, `variables.${name}`)
    }
    const got = variables[name]
    if (got.length > MAX_VARIABLE_VALUE) {
      throw Errors.validation(`variables.${name}`, `variables.${name} is at most ${MAX_VARIABLE_VALUE} characters.`)
    }
    return got
  }
  // Every placeholder is checked first, so the error names the first missing one of role, then greeting.
  for (const name of placeholdersOf(profile.role, profile.greeting, prompt)) value(name)
  const fill = (text: string) => text.replace(PLACEHOLDER, (_, name: string) => value(name))
  const role = fill(profile.role)
  return {
    role,
    greeting: profile.greeting === null ? null : fill(profile.greeting),
    prompt: prompt === null ? role : fill(prompt),
  }
}
