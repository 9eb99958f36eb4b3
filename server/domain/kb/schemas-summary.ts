// Schemas of the knowledge summary and status routes (validation and the OpenAPI document).
import * as v from 'valibot'
import { JsonRecord } from '~/lib/schemas'
import { coded } from '~/lib/errors'

/** Manual replace cap: the summary is a prompt section, not a document store. */
export const SUMMARY_REPLACE_MAX_CHARS = 200_000

export const KbSummaryReplace = v.strictObject({
  text: v.pipe(
    v.string(coded('validation_error', 'text must be a string.')),
    v.check((s) => s.trim().length > 0, coded('validation_error', 'text must not be empty.')),
    v.maxLength(
      SUMMARY_REPLACE_MAX_CHARS,
      coded('validation_error', `text is at most ${SUMMARY_REPLACE_MAX_CHARS} characters.`),
    ),
  ),
})

const Ts = v.nullable(v.pipe(v.string(), v.isoTimestamp()))
const LastJob = v.nullable(JsonRecord(v.string(), v.unknown()))

export const KbSummary = v.object({
  agent_id: v.string(),
  text: v.nullable(v.string()),
  version: v.number(),
  source: v.nullable(v.picklist(['build', 'reindex', 'manual'])),
  stale: v.boolean(),
  pending_sources: v.number(),
  updated_at: Ts,
  last_job: LastJob,
})

const Dropped = v.array(v.object({ doc_id: v.string(), title: v.nullable(v.string()), chars: v.number() }))
const Surface = v.object({ documents: v.number(), chars: v.number(), cap: v.number(), dropped: Dropped })

export const KbStatus = v.object({
  agent_id: v.string(),
  summary: v.object({
    status: v.picklist(['none', 'ready', 'rebuilding']),
    stale: v.boolean(),
    last_job: LastJob,
    pending_sources: v.number(),
    version: v.number(),
  }),
  crawl: v.looseObject({
    status: v.string(),
    crawl_id: v.nullable(v.string()),
    pages_done: v.number(),
    started_at: Ts,
  }),
  vector_sync: v.null(),
  verbatim: v.object({ chat: Surface, calls: Surface }),
})
