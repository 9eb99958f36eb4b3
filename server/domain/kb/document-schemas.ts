// Knowledge documents on the wire (contract "Knowledge document", decisions "Knowledge create").
import * as v from 'valibot'
import { coded } from '~/lib/errors'
import { Cursor, Limit } from '~/lib/schemas'

export const DOCUMENT_KINDS = ['file', 'text', 'page'] as const
export const DOCUMENT_STATUSES = ['processing', 'indexed', 'failed'] as const
export type DocumentKind = (typeof DOCUMENT_KINDS)[number]

const DocId = v.pipe(
  v.string(coded('invalid_id', 'Expected a document id of the form doc_f<n> or doc_c<n>.')),
  v.regex(/^doc_[fc]\d{1,18}$/, coded('invalid_id', 'Expected a document id of the form doc_f<n> or doc_c<n>.')),
  v.description('doc_f<n> (file or text) or doc_c<n> (crawled page)'),
)
const AgtId = v.pipe(
  v.string(coded('invalid_id', 'Expected an id of the form agt_<n>.')),
  v.regex(/^agt_\d{1,18}$/, coded('invalid_id', 'Expected an id of the form agt_<n>.')),
)
export const DocumentParams = v.object({ agt: AgtId, doc: DocId })

/**
 * One JSON body for both JSON shapes: {title, text, language} or {url, mode}. Which shape it is, and
 * what is missing, is decided in documents.ts (a body of neither shape is "no recognisable shape").
 */
export const DocumentCreateJson = v.strictObject({
  title: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.minLength(1, 'title must not be empty.'),
      v.maxLength(500, 'title: at most 500 characters.'),
    ),
  ),
  text: v.optional(v.pipe(v.string(), v.maxLength(2_000_000, 'text: at most 2,000,000 characters.'))),
  language: v.optional(
    v.pipe(v.string(), v.regex(/^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$/, 'language: a BCP 47 tag such as en or en-GB.')),
  ),
  url: v.optional(v.pipe(v.string(), v.maxLength(2048, 'url: at most 2048 characters.'))),
  mode: v.optional(v.picklist(['page', 'site'], 'mode must be page or site.')),
  keep_verbatim: v.optional(v.boolean()),
  verbatim_in_calls: v.optional(v.boolean()),
})
export type DocumentCreateJson = v.InferOutput<typeof DocumentCreateJson>

/** The multipart form, for the OpenAPI document (the route parses the parts itself). */
export const DocumentCreateMultipart = v.object({
  file: v.pipe(
    v.string(),
    v.metadata({ format: 'binary' }),
    v.description('Plain text, Markdown, HTML, PDF or DOCX; at most 10 MB.'),
  ),
  title: v.optional(v.string()),
  language: v.optional(v.string()),
  keep_verbatim: v.optional(v.picklist(['true', 'false'])),
  verbatim_in_calls: v.optional(v.picklist(['true', 'false'])),
})

export const DocumentPatch = v.strictObject({
  keep_verbatim: v.optional(v.boolean()),
  verbatim_in_calls: v.optional(v.boolean()),
})
export type DocumentPatch = v.InferOutput<typeof DocumentPatch>

export const DocumentListQuery = v.object({
  kind: v.optional(v.picklist(DOCUMENT_KINDS, 'kind must be file, text or page.')),
  status: v.optional(v.picklist(DOCUMENT_STATUSES, 'status must be processing, indexed or failed.')),
  limit: Limit(100, 50),
  cursor: Cursor,
})

const Ts = v.pipe(v.string(), v.isoTimestamp())
export const KbDocument = v.object({
  doc_id: v.string(),
  agent_id: v.string(),
  kind: v.picklist(DOCUMENT_KINDS),
  status: v.picklist(DOCUMENT_STATUSES),
  error: v.nullable(v.string()),
  title: v.nullable(v.string()),
  url: v.nullable(v.string()),
  language: v.nullable(v.string()),
  chars: v.number(),
  keep_verbatim: v.boolean(),
  verbatim_in_calls: v.boolean(),
  source: v.picklist(['upload', 'text', 'url', 'crawl', 'build']),
  mime_type: v.nullable(v.string()),
  bytes: v.nullable(v.number()),
  content_hash: v.nullable(v.string()),
  crawl_id: v.nullable(v.string()),
  created_at: Ts,
  updated_at: Ts,
  /** Only on GET /agents/{agt}/kb/documents/{doc}. */
  text: v.optional(v.nullable(v.string())),
})
export type KbDocument = v.InferOutput<typeof KbDocument>

export const DocumentAccepted = v.object({
  doc_id: v.nullable(v.string()),
  crawl_id: v.nullable(v.string()),
  status: v.literal('processing'),
})
