// Values for the generative fuzz (test/v1/fuzz.test.ts), derived from the JSON Schemas the OpenAPI
// document publishes for each route: valid and boundary values (fast-check arbitraries), values that
// break one rule of the schema (wrong type, past a bound, outside an enum, not matching a pattern), and a
// small checker (`accepts`) so an "invalid" value is only used when the document itself refuses it.
import fc from 'fast-check'

export type Schema = Record<string, any>

/** Lengths past which a generated valid string stops growing (the bound itself is tried as a constant). */
const CAP = 40

function typesOf(s: Schema): string[] | null {
  if (s.const !== undefined) return [jsonType(s.const)]
  if (s.enum) return [...new Set<string>(s.enum.map(jsonType))]
  if (s.anyOf) {
    const all = s.anyOf.map(typesOf)
    return all.includes(null) ? null : [...new Set<string>(all.flat())]
  }
  if (Array.isArray(s.type)) return s.type
  if (typeof s.type === 'string') return [s.type]
  return null
}

export function jsonType(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number'
  return typeof v
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

/** Whether the JSON Schema (the subset the document uses) accepts `v`. */
export function accepts(s: Schema, v: unknown): boolean {
  if (s.const !== undefined && v !== s.const) return false
  if (s.enum && !s.enum.includes(v)) return false
  if (s.anyOf) return s.anyOf.some((b: Schema) => accepts(b, v))
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : null
  if (types) {
    const t = jsonType(v)
    if (!types.includes(t) && !(t === 'integer' && types.includes('number'))) return false
  }
  if (typeof v === 'string') {
    if (s.minLength !== undefined && v.length < s.minLength) return false
    if (s.maxLength !== undefined && v.length > s.maxLength) return false
    if (s.pattern && !new RegExp(s.pattern, 'u').test(v)) return false
    if (s.format === 'email' && !EMAIL.test(v)) return false
    if (s.format === 'date-time' && !DATE_TIME.test(v)) return false
  }
  if (typeof v === 'number') {
    if (s.minimum !== undefined && v < s.minimum) return false
    if (s.maximum !== undefined && v > s.maximum) return false
  }
  if (Array.isArray(v)) {
    if (s.minItems !== undefined && v.length < s.minItems) return false
    if (s.maxItems !== undefined && v.length > s.maxItems) return false
    if (s.items && !v.every((x) => accepts(s.items, x))) return false
  }
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>
    for (const r of s.required ?? []) if (!(r in o)) return false
    for (const [k, x] of Object.entries(o)) {
      if (s.propertyNames && !accepts(s.propertyNames, k)) return false
      const p = s.properties?.[k]
      if (p) {
        if (!accepts(p, x)) return false
      } else if (s.additionalProperties === false) return false
      else if (s.additionalProperties && typeof s.additionalProperties === 'object') {
        if (!accepts(s.additionalProperties, x)) return false
      }
    }
  }
  return true
}

export interface ValidOptions {
  /** Overrides by property name (e.g. URLs pointed at the test's own site: there is no DNS here). */
  overrides?: Record<string, fc.Arbitrary<unknown>>
}

/** Valid and boundary values of the schema. */
export function validOf(s: Schema, opts: ValidOptions = {}, depth = 0, name = ''): fc.Arbitrary<unknown> {
  if (name && opts.overrides?.[name]) return opts.overrides[name]
  if (s.const !== undefined) return fc.constant(s.const)
  if (s.enum) return fc.constantFrom(...s.enum)
  if (s.anyOf) return fc.oneof(...s.anyOf.map((b: Schema) => validOf(b, opts, depth, name)))
  if (Array.isArray(s.type))
    return fc.oneof(...s.type.map((t: string) => validOf({ ...s, type: t }, opts, depth, name)))
  switch (s.type) {
    case 'string':
      return validString(s)
    case 'integer': {
      const min = s.minimum ?? -1_000_000
      const max = s.maximum ?? 1_000_000
      return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max))
    }
    case 'number': {
      const min = s.minimum ?? -1_000_000
      const max = s.maximum ?? 1_000_000
      return fc.oneof(fc.double({ min, max, noNaN: true, noDefaultInfinity: true }), fc.constantFrom(min, max))
    }
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array': {
      if (depth > 4) return fc.constant([])
      const minLength = s.minItems ?? 0
      const maxLength = Math.max(minLength, Math.min(s.maxItems ?? 4, 4))
      return fc.array(s.items ? validOf(s.items, opts, depth + 1, name) : fc.jsonValue({ maxDepth: 1 }), {
        minLength,
        maxLength,
      })
    }
    case 'object':
      return validObject(s, opts, depth)
    default:
      return fc.jsonValue({ maxDepth: 2 })
  }
}

function validObject(s: Schema, opts: ValidOptions, depth: number): fc.Arbitrary<unknown> {
  if (depth > 4) return fc.constant({})
  if (s.properties && Object.keys(s.properties).length) {
    const model = Object.fromEntries(
      Object.entries<Schema>(s.properties).map(([k, p]) => [k, validOf(p, opts, depth + 1, k)]),
    )
    return fc.record(model, { requiredKeys: (s.required ?? []) as string[] })
  }
  if (s.additionalProperties === false) return fc.constant({})
  const key = s.propertyNames
    ? (validOf(s.propertyNames).filter((k) => typeof k === 'string') as fc.Arbitrary<string>)
    : fc.string({ minLength: 1, maxLength: 12 })
  const value =
    s.additionalProperties && typeof s.additionalProperties === 'object'
      ? validOf(s.additionalProperties, opts, depth + 1)
      : fc.jsonValue({ maxDepth: 2 })
  return fc.dictionary(key, value, { maxKeys: 3 })
}

function validString(s: Schema): fc.Arbitrary<string> {
  const min = s.minLength ?? 0
  const max = s.maxLength ?? Number.POSITIVE_INFINITY
  const fits = (x: string) => x.length >= min && x.length <= max
  if (s.pattern) return fc.stringMatching(new RegExp(s.pattern)).filter(fits)
  if (s.format === 'email') return fc.emailAddress().filter(fits)
  if (s.format === 'date-time')
    return fc
      .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true })
      .map((d) => d.toISOString())
  const arbs: fc.Arbitrary<string>[] = [fc.string({ minLength: min, maxLength: Math.max(min, Math.min(max, CAP)) })]
  // Boundaries: exactly the shortest and the longest accepted (the longest only while it stays small).
  if (min > 0) arbs.push(fc.constant('x'.repeat(min)))
  if (Number.isFinite(max) && max <= 20_000) arbs.push(fc.constant('x'.repeat(max)))
  return fc.oneof(...arbs)
}

/** Candidate values of every JSON type, and a few hostile strings of each kind. */
const PROBES: unknown[] = [0, -1, 1.5, 1e300, 'x', '', true, false, null, [], [1], {}, { a: 1 }]

/**
 * Values the schema refuses, each with the rule it breaks: one of every wrong type, one past each bound
 * (length, range, items), one outside the enum, one against the pattern or format. Every value returned
 * is checked against `accepts`, so a loose schema yields fewer (or none).
 */
export function invalidOf(s: Schema): { value: unknown; why: string }[] {
  const out: { value: unknown; why: string }[] = []
  const add = (value: unknown, why: string) => {
    if (!accepts(s, value)) out.push({ value, why })
  }
  const types = typesOf(s)
  if (!types) return out
  for (const p of PROBES) if (!types.includes(jsonType(p))) add(p, `wrong type ${jsonType(p)}`)
  const branches: Schema[] = s.anyOf ?? [s]
  for (const b of branches) {
    if (b.maxLength !== undefined) add('x'.repeat(b.maxLength + 1), 'longer than maxLength')
    if (b.minLength) add('x'.repeat(b.minLength - 1), 'shorter than minLength')
    if (b.pattern) add('!! not-this-pattern', 'pattern')
    if (b.format === 'email') add('not-an-address', 'format email')
    if (b.format === 'date-time') add('2026-13-45 25:61', 'format date-time')
    if (b.enum) add(`zz_${b.enum.join('_').slice(0, 20)}`, 'outside the enum')
    if (b.maximum !== undefined) add(b.maximum + 1, 'above maximum')
    if (b.minimum !== undefined) add(b.minimum - 1, 'below minimum')
    if (b.type === 'integer') add((b.minimum ?? 0) + 0.5, 'not an integer')
    if (b.type === 'array') {
      if (b.maxItems !== undefined && b.maxItems <= 1000)
        add(fc.sample(validOf(b.items ?? {}), { numRuns: b.maxItems + 1, seed: 1 }), 'more than maxItems')
      if (b.minItems) add([], 'fewer than minItems')
      for (const bad of b.items ? invalidOf(b.items).slice(0, 2) : []) add([bad.value], `item: ${bad.why}`)
    }
    if (b.type === 'object' && b.additionalProperties === false) add({ zz_unknown_inner: 1 }, 'unknown inner key')
  }
  return out
}
