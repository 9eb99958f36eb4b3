// The option sets of the knowledge-document routes, shared by the flat form and the account alias.
import * as v from 'valibot'
import type { BindKeyset, MultipartPart } from './route-meta'
import type { Runtime } from '~/kit/runtime'
import type { ErrorCode } from '~/lib/errors'
import { createDocument, listDocuments } from '~/domain/kb/documents'
import {
  DocumentAccepted,
  DocumentCreateJson,
  DocumentCreateMultipart,
  DocumentListQuery,
  KbDocument,
} from '~/domain/kb/document-schemas'

export const createOptions = {
  summary: 'Add a knowledge document',
  description:
    'multipart/form-data with a part `file` (plain text, Markdown, HTML, PDF or DOCX; at most 10 MB; optional fields title, language, keep_verbatim, verbatim_in_calls), or JSON {title, text, language}, or JSON {url, mode} with mode `page` (one page) or `site` (a whole-site crawl; doc_id null, its pages appear as doc_c documents). keep_verbatim and verbatim_in_calls are accepted on create. Always 202 processing; ingestion moves the document to indexed or failed. Plan caps per agent: trial 20 files and 50 crawl pages, starter 500 and 1000 (403 plan_limit_reached). Takes one kb_documents unit of the daily quota per document (a site crawl: per stored page).',
  tags: ['Knowledge base'],
  scope: 'kb:write' as const,
  dataRoute: true,
  body: DocumentCreateJson,
  multipart: true,
  multipartBody: DocumentCreateMultipart,
  status: 202,
  response: DocumentAccepted,
  errors: [
    'invalid_id',
    'agent_not_found',
    'invalid_url',
    'plan_limit_reached',
    'quota_exceeded',
  ] satisfies ErrorCode[],
}

export const listOptions = {
  summary: 'List knowledge documents',
  description:
    'Newest first; keyset on (created_at, kind, id). Filters kind (file, text, page) and status; the cursor is bound to them. Text is shown only on GET of one document.',
  tags: ['Knowledge base'],
  scope: 'kb:read' as const,
  dataRoute: true,
  query: DocumentListQuery,
  response: v.object({ data: v.array(KbDocument) }),
  errors: ['invalid_id', 'agent_not_found', 'invalid_limit', 'invalid_cursor'] satisfies ErrorCode[],
}

export function handleCreate(
  runtime: Runtime,
  accountId: string,
  agentId: string,
  body: DocumentCreateJson | undefined,
  parts: MultipartPart[] | null,
) {
  return createDocument(
    {
      database: runtime.database,
      blobs: runtime.blobs,
      allowPrivateHosts: runtime.config.allowPrivateHosts,
      send: (name, data) => runtime.queue.send(name, data),
    },
    accountId,
    agentId,
    parts ? { kind: 'multipart', parts } : { kind: 'json', body: body ?? {} },
  )
}

export async function handleList(
  runtime: Runtime,
  keyset: BindKeyset,
  accountId: string,
  agentId: string,
  query: v.InferOutput<typeof DocumentListQuery>,
) {
  const filters = { kind: query.kind ?? null, status: query.status ?? null }
  const page = await keyset({ filters, sort: '-created_at,-kind,-id', limit: query.limit, cursor: query.cursor })
  return listDocuments(runtime.database, accountId, agentId, { kind: query.kind, status: query.status }, page)
}
