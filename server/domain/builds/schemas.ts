import * as v from 'valibot'
import { AGENT_TYPES } from '~/domain/agents/schemas'

export const BUILD_STEPS = ['crawl', 'summary', 'greeting', 'instructions'] as const
export type BuildStepName = (typeof BUILD_STEPS)[number]

export const BuildCreate = v.strictObject({
  website_url: v.pipe(
    v.string(),
    v.trim(),
    v.minLength(1, 'website_url is required.'),
    v.maxLength(2048),
    v.description('http(s) URL of the site to build from; private and service hosts are refused (invalid_url).'),
  ),
  voice_id: v.pipe(
    v.string(),
    v.trim(),
    v.minLength(1, 'voice_id is required.'),
    v.maxLength(100),
    v.description('A voice from GET /voices.'),
  ),
  name: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200))),
  language: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'language must be a BCP-47 tag such as en or pt-BR.'),
    ),
    'en',
  ),
  agent_type: v.optional(v.picklist(AGENT_TYPES, `agent_type is one of ${AGENT_TYPES.join(', ')}.`), 'chat'),
  // Body account_id takes part in account resolution (contract) and must match the path.
  account_id: v.optional(v.string()),
})
export type BuildCreate = v.InferOutput<typeof BuildCreate>

export const BuildRerun = v.strictObject({
  from_step: v.optional(v.picklist(BUILD_STEPS, `from_step is one of ${BUILD_STEPS.join(', ')}.`), 'crawl'),
})

const Ts = v.nullable(v.pipe(v.string(), v.isoTimestamp()))
export const Build = v.object({
  build_id: v.string(),
  agent_id: v.string(),
  build_number: v.number(),
  status: v.picklist(['queued', 'running', 'succeeded', 'failed']),
  from_step: v.picklist(BUILD_STEPS),
  steps: v.array(
    v.object({
      name: v.picklist(BUILD_STEPS),
      status: v.picklist(['queued', 'running', 'succeeded', 'failed', 'skipped']),
      started_at: Ts,
      finished_at: Ts,
      duration_ms: v.nullable(v.number()),
      error: v.nullable(v.string()),
    }),
  ),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
  started_at: Ts,
  finished_at: Ts,
})
export type Build = v.InferOutput<typeof Build>

export const BuildAccepted = v.object({ agent_id: v.string(), build: Build })
