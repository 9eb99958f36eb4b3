// A knowledge document as the API shows it.
import type { kbDocuments } from '~/db/schema'
import type { KbDocument } from './document-schemas'

type DocRow = typeof kbDocuments.$inferSelect

export function presentDocument(row: DocRow, withText = false): KbDocument {
  return {
    doc_id: row.id,
    agent_id: row.agentId,
    kind: row.kind as KbDocument['kind'],
    status: row.status as KbDocument['status'],
    error: row.error,
    title: row.title,
    url: row.url,
    language: row.language,
    chars: row.chars,
    keep_verbatim: row.keepVerbatim,
    verbatim_in_calls: row.verbatimInCalls,
    source: row.source as KbDocument['source'],
    mime_type: row.mimeType,
    bytes: row.bytes,
    content_hash: row.contentHash,
    crawl_id: row.crawlId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    ...(withText ? { text: row.text } : {}),
  }
}
