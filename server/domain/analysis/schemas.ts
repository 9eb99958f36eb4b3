// The agent's `analysis` setting and the backfill body (decisions "Conversation analysis"). The shape is
// checked by valibot (a field path such as analysis.fields.3.name names a bad item); the rules across items
// (enum iff type enum, unique names) by analysisProblem, which names the same kind of path.
import * as v from 'valibot'
import { Timestamp } from '~/lib/schemas'
import { Errors } from '~/lib/errors'
import type { AnalysisField } from '~/kit/chat-engine'

export const FIELD_TYPES = ['string', 'number', 'boolean', 'enum', 'date'] as const
export const MAX_FIELDS = 25

const Field = v.strictObject({
  name: v.pipe(
    v.string(),
    v.regex(/^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/, 'Expected a snake_case name such as party_size.'),
    v.maxLength(40, 'At most 40 characters.'),
  ),
  type: v.picklist(FIELD_TYPES, `Expected one of ${FIELD_TYPES.join(', ')}.`),
  description: v.pipe(v.string(), v.maxLength(500, 'At most 500 characters.')),
  enum: v.optional(
    v.pipe(
      v.array(v.pipe(v.string(), v.trim(), v.minLength(1, 'Must not be empty.'), v.maxLength(100))),
      v.minLength(1, 'At least one value.'),
      v.maxLength(50, 'At most 50 values.'),
    ),
  ),
  required: v.optional(v.boolean()),
})

export const AnalysisSetting = v.nullable(
  v.strictObject({
    fields: v.pipe(v.array(Field), v.maxLength(MAX_FIELDS, `At most ${MAX_FIELDS} fields.`)),
    success_criteria: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(1_000, 'At most 1000 characters.')))),
  }),
)
export type AnalysisSetting = v.InferOutput<typeof AnalysisSetting>

/** 400 validation_error naming the first field that breaks a rule across items, or nothing. */
export function checkAnalysis(a: AnalysisSetting | undefined) {
  if (!a) return
  const seen = new Set<string>()
  a.fields.forEach((f, i) => {
    const at = `analysis.fields.${i}`
    if (f.type === 'enum' && !f.enum)
      throw Errors.validation(`${at}.enum`, `${at}.enum: an enum field lists its values.`)
    if (f.type !== 'enum' && f.enum)
      throw Errors.validation(`${at}.enum`, `${at}.enum: only a field of type enum lists values.`)
    if (seen.has(f.name)) throw Errors.validation(`${at}.name`, `${at}.name: "${f.name}" is already a field name.`)
    seen.add(f.name)
  })
}

/** The setting as stored on the agent, or null when the agent has none. */
export function analysisOf(settings: Record<string, unknown>): {
  fields: AnalysisField[]
  success_criteria: string | null
} | null {
  const a = settings.analysis as { fields?: AnalysisField[]; success_criteria?: string | null } | undefined
  if (!a || !Array.isArray(a.fields)) return null
  return { fields: a.fields, success_criteria: a.success_criteria ?? null }
}

export const BackfillBody = v.strictObject({
  from: v.optional(Timestamp),
  to: v.optional(Timestamp),
})
export type BackfillBody = v.InferOutput<typeof BackfillBody>

const Evidence = v.object({ turn_index: v.number(), start: v.number(), end: v.number() })
export const AnalysisOut = v.object({
  analysis_version: v.number(),
  values: v.record(v.string(), v.nullable(v.union([v.string(), v.number(), v.boolean()]))),
  evidence: v.record(v.string(), v.array(Evidence)),
  success: v.nullable(v.boolean()),
  analyzed_at: v.pipe(v.string(), v.isoTimestamp()),
})

export const BackfillOut = v.object({
  agent_id: v.string(),
  analysis_version: v.number(),
  from: v.nullable(v.string()),
  to: v.nullable(v.string()),
  pending: v.pipe(v.number(), v.description('Ended conversations in the window lacking the current version.')),
  status: v.literal('queued'),
})
