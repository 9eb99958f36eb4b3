// Knowledge documents (contract Lifecycle steps 3–4): create from an upload, inline text, one page or a
// whole-site crawl; always 202 processing, then the kb.ingest / kb.crawl jobs move a document to indexed
// or failed. Plan caps per agent (files and crawl pages) and the kb_documents daily quota are taken here.
import { and, desc, eq, sql } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { kbCrawls, kbDocuments } from '~/db/schema'
import type { BlobStore } from '~/kit/blob-store'
import { Errors } from '~/lib/errors'
import { keysetPage, type KeysetRequest } from '~/lib/keyset'
import type { Page } from '~/lib/keyset'
import { loadAgent } from '~/domain/agents/agents'
import { nextDocumentId } from '~/domain/agents/create'
import { consumeQuota, effectiveLimits, quotaUsed } from '~/domain/limits/quotas'
import { markSummaryStale } from './summary'
import { assertFetchableUrl, resolvePublic } from './url-guard'
import type { DocumentCreateJson, DocumentPatch, KbDocument } from './document-schemas'

import { presentDocument } from './document-present'
import { detectFormat, mimeOf } from './upload-format'
import { CRAWL_JOB, INGEST_JOB } from './ingest'
import { admit } from './admission'

type DocRow = typeof kbDocuments.$inferSelect

// ---------------------------------------------------------------------------------------------------
// Create

export interface UploadPart {
  name?: string
  filename?: string
  type?: string
  data: Buffer
}
export type DocumentInput = { kind: 'json'; body: DocumentCreateJson } | { kind: 'multipart'; parts: UploadPart[] }
export interface Accepted {
  doc_id: string | null
  crawl_id: string | null
  status: 'processing'
}
export interface CreateDeps {
  database: Database
  blobs: BlobStore
  allowPrivateHosts: readonly string[]
  send(name: string, data: object): Promise<unknown>
}

const MULTIPART_FIELDS = new Set(['file', 'title', 'language', 'keep_verbatim', 'verbatim_in_calls'])

function formBoolean(part: UploadPart | undefined, field: string): boolean | undefined {
  if (!part) return undefined
  const s = part.data.toString('utf8').trim().toLowerCase()
  if (s === 'true') return true
  if (s === 'false') return false
  throw Errors.validation(field, `${field} must be true or false.`)
}

export async function createDocument(
  deps: CreateDeps,
  accountId: string,
  agentId: string,
  input: DocumentInput,
): Promise<Accepted> {
  await loadAgent(deps.database.db, accountId, agentId)
  if (input.kind === 'multipart') return createFromUpload(deps, accountId, agentId, input.parts)
  const b = input.body
  if (b.url !== undefined || b.mode !== undefined) {
    if (b.title !== undefined || b.text !== undefined)
      throw Errors.validation(null, 'Send either {title, text, language} or {url, mode}, not both.')
    if (b.url === undefined) throw Errors.validation('url', 'url is required with mode.')
    if (b.mode === undefined) throw Errors.validation('mode', 'mode is required with url: page or site.')
    return createFromUrl(deps, accountId, agentId, b.url, b.mode, b)
  }
  if (b.title !== undefined || b.text !== undefined) {
    if (b.title === undefined) throw Errors.validation('title', 'title is required.')
    if (b.text === undefined || b.text.trim() === '') throw Errors.validation('text', 'text is required.')
    return createFromText(deps, accountId, agentId, {
      title: b.title,
      text: b.text,
      language: b.language ?? null,
      keepVerbatim: b.keep_verbatim,
      verbatimInCalls: b.verbatim_in_calls,
    })
  }
  throw Errors.validation(
    null,
    'The body has no recognisable shape: send multipart/form-data with a file part, {title, text, language} or {url, mode}.',
  )
}

async function createFromText(
  deps: CreateDeps,
  accountId: string,
  agentId: string,
  d: { title: string; text: string; language: string | null; keepVerbatim?: boolean; verbatimInCalls?: boolean },
) {
  const id = await deps.database.tx(async (tx) => {
    await admit(tx, accountId, agentId, 'file')
    await consumeQuota(tx, accountId, 'kb_documents')
    const id = await nextDocumentId(tx, 'text')
    await tx.insert(kbDocuments).values({
      id,
      agentId,
      accountId,
      kind: 'text',
      source: 'text',
      status: 'processing',
      title: d.title,
      text: d.text,
      language: d.language,
      keepVerbatim: d.keepVerbatim ?? false,
      verbatimInCalls: d.verbatimInCalls ?? false,
      mimeType: 'text/plain',
      bytes: Buffer.byteLength(d.text),
    })
    return id
  })
  await deps.send(INGEST_JOB, { doc_id: id })
  return { doc_id: id, crawl_id: null, status: 'processing' as const }
}

async function createFromUpload(deps: CreateDeps, accountId: string, agentId: string, parts: UploadPart[]) {
  const byName = new Map<string, UploadPart>()
  for (const p of parts) {
    const name = p.name ?? ''
    if (!MULTIPART_FIELDS.has(name)) throw Errors.unsupportedField(name || '(unnamed part)')
    if (byName.has(name)) throw Errors.validation(name, `${name} may be sent only once.`)
    byName.set(name, p)
  }
  const file = byName.get('file')
  if (!file || file.filename === undefined)
    throw Errors.validation('file', 'file is required: a multipart part named file with a filename.')
  const format = detectFormat(file.filename, file.type, file.data)
  const title = byName.get('title')?.data.toString('utf8').trim() || file.filename || 'Untitled'
  const language = byName.get('language')?.data.toString('utf8').trim() || null
  if (language && !/^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$/.test(language))
    throw Errors.validation('language', 'language: a BCP 47 tag such as en or en-GB.')
  const keepVerbatim = formBoolean(byName.get('keep_verbatim'), 'keep_verbatim')
  const verbatimInCalls = formBoolean(byName.get('verbatim_in_calls'), 'verbatim_in_calls')
  const id = await deps.database.tx(async (tx) => {
    await admit(tx, accountId, agentId, 'file')
    await consumeQuota(tx, accountId, 'kb_documents')
    const id = await nextDocumentId(tx, 'file')
    const blobKey = `${accountId}/${agentId}/${id}`
    await tx.insert(kbDocuments).values({
      id,
      agentId,
      accountId,
      kind: 'file',
      source: 'upload',
      status: 'processing',
      title: title.slice(0, 500),
      language,
      keepVerbatim: keepVerbatim ?? false,
      verbatimInCalls: verbatimInCalls ?? false,
      mimeType: mimeOf(format),
      bytes: file.data.length,
      blobKey,
    })
    // Inside the transaction: a failed write leaves no document without its original.
    await deps.blobs.put(blobKey, file.data)
    return id
  })
  await deps.send(INGEST_JOB, { doc_id: id })
  return { doc_id: id, crawl_id: null, status: 'processing' as const }
}

async function createFromUrl(
  deps: CreateDeps,
  accountId: string,
  agentId: string,
  raw: string,
  mode: 'page' | 'site',
  b: DocumentCreateJson,
) {
  const u = assertFetchableUrl(raw, { allowPrivateHosts: deps.allowPrivateHosts, field: 'url' })
  await resolvePublic(u.hostname, { allowPrivateHosts: deps.allowPrivateHosts, field: 'url' })
  u.hash = ''
  if (mode === 'site') {
    const crawlId = await deps.database.tx(async (tx) => {
      await admit(tx, accountId, agentId, 'page')
      // Pages take the quota as they are stored; refuse up front when none is left today.
      const { quotas } = await effectiveLimits(tx, accountId)
      if ((await quotaUsed(tx, accountId)).kb_documents >= quotas.kb_documents)
        await consumeQuota(tx, accountId, 'kb_documents')
      const [c] = await tx
        .insert(kbCrawls)
        .values({ agentId, accountId, startUrl: u.href, mode: 'site', status: 'queued' })
        .returning({ id: kbCrawls.id })
      return c.id
    })
    await deps.send(CRAWL_JOB, { crawl_id: crawlId })
    return { doc_id: null, crawl_id: crawlId, status: 'processing' as const }
  }
  const { id, crawlId } = await deps.database.tx(async (tx) => {
    await admit(tx, accountId, agentId, 'page')
    await consumeQuota(tx, accountId, 'kb_documents')
    const [c] = await tx
      .insert(kbCrawls)
      .values({ agentId, accountId, startUrl: u.href, mode: 'page', status: 'queued' })
      .returning({ id: kbCrawls.id })
    const id = await nextDocumentId(tx, 'page')
    await tx.insert(kbDocuments).values({
      id,
      agentId,
      accountId,
      kind: 'page',
      source: 'url',
      status: 'processing',
      title: b.title ?? u.href,
      url: u.href,
      crawlId: c.id,
      language: b.language ?? null,
      keepVerbatim: b.keep_verbatim ?? false,
      verbatimInCalls: b.verbatim_in_calls ?? false,
    })
    return { id, crawlId: c.id }
  })
  await deps.send(INGEST_JOB, { doc_id: id })
  return { doc_id: id, crawl_id: crawlId, status: 'processing' as const }
}

// ---------------------------------------------------------------------------------------------------
// Read, list, patch

export async function getDocument(
  database: Database,
  accountId: string,
  agentId: string,
  docId: string,
): Promise<KbDocument> {
  await loadAgent(database.db, accountId, agentId)
  return presentDocument(await loadDocument(database.db, accountId, agentId, docId), true)
}

async function loadDocument(
  ex: Executor,
  accountId: string,
  agentId: string,
  docId: string,
  lock = false,
): Promise<DocRow> {
  const q = ex
    .select()
    .from(kbDocuments)
    .where(and(eq(kbDocuments.id, docId), eq(kbDocuments.agentId, agentId), eq(kbDocuments.accountId, accountId)))
  const [row] = lock ? await q.for('update') : await q
  if (!row) throw Errors.notFound('Document')
  return row
}

/** Newest first, keyset on (created_at, kind, id). */
export async function listDocuments(
  database: Database,
  accountId: string,
  agentId: string,
  filters: { kind?: string; status?: string },
  page: KeysetRequest,
): Promise<Page<KbDocument>> {
  await loadAgent(database.db, accountId, agentId)
  const conds = [eq(kbDocuments.agentId, agentId), eq(kbDocuments.accountId, accountId)]
  if (filters.kind) conds.push(eq(kbDocuments.kind, filters.kind))
  if (filters.status) conds.push(eq(kbDocuments.status, filters.status))
  if (page.after) {
    const [at, kind, id] = page.after as [string, string, string]
    conds.push(
      sql`(${kbDocuments.createdAt}, ${kbDocuments.kind}, ${kbDocuments.id}) < (${new Date(at).toISOString()}::timestamptz, ${kind}, ${id})`,
    )
  }
  const rows = await database.db
    .select()
    .from(kbDocuments)
    .where(and(...conds))
    .orderBy(desc(kbDocuments.createdAt), desc(kbDocuments.kind), desc(kbDocuments.id))
    .limit(page.binding.limit + 1)
  return keysetPage(
    page,
    rows,
    (r) => [r.createdAt.toISOString(), r.kind, r.id],
    (r) => presentDocument(r),
  )
}

/**
 * keep_verbatim / verbatim_in_calls. The flags are read at the start of every conversation, so they
 * need no rebuild (contract "What needs a rebuild"); but a document that stops being keep-as-is becomes
 * a summary source again, so that change (and only that one) marks the summary stale.
 */
export async function patchDocument(
  database: Database,
  accountId: string,
  agentId: string,
  docId: string,
  patch: DocumentPatch,
): Promise<KbDocument> {
  return database.tx(async (tx) => {
    // The agent row before the document: the lock order of lockKnowledge (summary.ts).
    const agent = await loadAgent(tx, accountId, agentId, true)
    const row = await loadDocument(tx, accountId, agentId, docId, true)
    const set: Partial<DocRow> = {}
    if (patch.keep_verbatim !== undefined && patch.keep_verbatim !== row.keepVerbatim)
      set.keepVerbatim = patch.keep_verbatim
    if (patch.verbatim_in_calls !== undefined && patch.verbatim_in_calls !== row.verbatimInCalls)
      set.verbatimInCalls = patch.verbatim_in_calls
    if (!Object.keys(set).length) return presentDocument(row)
    const [updated] = await tx
      .update(kbDocuments)
      .set({ ...set, updatedAt: new Date() })
      .where(eq(kbDocuments.id, row.id))
      .returning()
    if (set.keepVerbatim === false && row.status === 'indexed') await markSummaryStale(tx, agent)
    return presentDocument(updated)
  })
}
