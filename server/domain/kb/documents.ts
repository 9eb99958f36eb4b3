// Knowledge documents (contract Lifecycle steps 3–4): create from an upload, inline text, one page or a
// whole-site crawl; always 202 processing, then the kb.ingest / kb.crawl jobs move a document to indexed
// or failed. Plan caps per agent (files and crawl pages) and the kb_documents daily quota are taken here.
import { createHash } from 'node:crypto'
import { and, count, desc, eq, inArray, ne, sql } from 'drizzle-orm'
import type { Database, Executor, Tx } from '~/db/client'
import { accounts, kbCrawls, kbDocuments } from '~/db/schema'
import type { BlobStore } from '~/kit/blob-store'
import type { JobContext } from '~/kit/job'
import { ApiError, Errors } from '~/lib/errors'
import { keysetPage, type KeysetRequest } from '~/lib/keyset'
import type { Page } from '~/lib/keyset'
import { loadAgent } from '~/domain/agents/agents'
import { nextDocumentId } from '~/domain/agents/create'
import { CRAWL_PAGE_CAP } from '~/domain/builds/run'
import { consumeQuota, effectiveLimits, quotaUsed } from '~/domain/limits/quotas'
import { crawlSite, fetchSinglePage } from './crawler'
import { crawlFinished, crawlPageDone, crawlStarted } from './crawl-progress'
import { extractUploadBounded } from './document-extract'
import { UploadLimitError, UploadUnreadableError, tidy } from './document-limits'
import { internalDetail, publicMessage } from './public-error'
import { markSummaryStale } from './summary'
import { assertFetchableUrl, resolvePublic } from './url-guard'
import type { DocumentCreateJson, DocumentPatch, KbDocument } from './document-schemas'

type DocRow = typeof kbDocuments.$inferSelect

export const INGEST_JOB = 'kb.ingest'
export const CRAWL_JOB = 'kb.crawl'

/** Files (kinds file and text) per agent by plan (decisions "Plan caps"); crawl pages: CRAWL_PAGE_CAP. */
export const FILE_CAP: Record<string, number> = { trial: 20, starter: 500 }
/** The phrase that makes a document keep-as-is on its own (contract Lifecycle step 4). */
export const VERBATIM_PHRASE = /^\s*IMPORTANT INSTRUCTION FOR AI ASSISTANT/i
const CRAWL_DEPTH = 3
const STALE_CRAWL_MS = 15 * 60_000

export const opensWithVerbatimPhrase = (text: string) => VERBATIM_PHRASE.test(text)
export const contentHash = (text: string) => createHash('sha256').update(text).digest('hex')

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

// ---------------------------------------------------------------------------------------------------
// Uploads: type detection and text extraction

export type UploadFormat = 'text' | 'markdown' | 'html' | 'pdf' | 'docx'
const MIME: Record<UploadFormat, string> = {
  text: 'text/plain',
  markdown: 'text/markdown',
  html: 'text/html',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
}
const BY_EXT: Record<string, UploadFormat> = {
  txt: 'text',
  text: 'text',
  md: 'markdown',
  markdown: 'markdown',
  html: 'html',
  htm: 'html',
  pdf: 'pdf',
  docx: 'docx',
}
const BY_TYPE: Record<string, UploadFormat> = {
  'text/plain': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
  [MIME.docx]: 'docx',
}

const isPdf = (b: Buffer) => b.subarray(0, 5).toString('latin1') === '%PDF-'
const isZip = (b: Buffer) => b.length > 4 && b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04
const looksBinary = (b: Buffer) => b.subarray(0, 8192).includes(0)

/**
 * The format of an upload from its extension, its declared content type and its first bytes, which must
 * agree: a "PDF" without the %PDF- signature, a DOCX that is not a zip, or text with NUL bytes is refused.
 * Anything else is 400 validation_error on field file.
 */
export function detectFormat(
  filename: string | undefined,
  contentType: string | undefined,
  data: Buffer,
): UploadFormat {
  const ext = /\.([a-z0-9]+)$/i.exec(filename ?? '')?.[1]?.toLowerCase()
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase()
  let format: UploadFormat | undefined = (ext && BY_EXT[ext]) || BY_TYPE[type]
  if (!format && (!type || type === 'application/octet-stream')) {
    // No useful name or type: the bytes decide (PDF signature, an HTML opening, otherwise refuse).
    if (isPdf(data)) format = 'pdf'
    else if (!looksBinary(data) && /^\s*(<!doctype html|<html)/i.test(data.subarray(0, 512).toString('utf8')))
      format = 'html'
  }
  const refuse = (why: string) => Errors.validation('file', why)
  if (!format) throw refuse('Unsupported file type: upload plain text, Markdown, HTML, PDF or DOCX.')
  if (format === 'pdf' && !isPdf(data)) throw refuse('The file is not a PDF (no %PDF- signature).')
  if (format === 'docx' && !isZip(data)) throw refuse('The file is not a DOCX document.')
  if (
    (format === 'text' || format === 'markdown' || format === 'html') &&
    (looksBinary(data) || isPdf(data) || isZip(data))
  ) {
    throw refuse('The file is binary, not text; upload plain text, Markdown, HTML, PDF or DOCX.')
  }
  if (data.length === 0) throw refuse('The file is empty.')
  return format
}

export const mimeOf = (format: UploadFormat) => MIME[format]
const formatOfMime = (mime: string | null): UploadFormat =>
  (Object.entries(MIME).find(([, m]) => m === mime)?.[0] as UploadFormat | undefined) ?? 'text'

/**
 * Clean text of an upload: PDF through unpdf, DOCX through mammoth, HTML through the page extractor, in a
 * worker thread within the upload limits (document-extract.ts).
 */
export const extractUpload = (format: UploadFormat, data: Buffer, log?: (line: string) => void) =>
  extractUploadBounded(format, data, log)

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

async function planOf(ex: Executor, accountId: string): Promise<string> {
  const [a] = await ex.select({ plan: accounts.plan }).from(accounts).where(eq(accounts.id, accountId))
  return a?.plan ?? 'trial'
}

const planLimitReached = (what: string, cap: number, plan: string) =>
  new ApiError(403, 'plan_limit_reached', `This agent has reached the ${plan} plan's cap of ${cap} ${what}.`)

/** Documents of these kinds that count against a cap (failed ones do not: they hold no knowledge). */
async function countDocs(ex: Executor, agentId: string, kinds: string[]): Promise<number> {
  const [{ n }] = await ex
    .select({ n: count() })
    .from(kbDocuments)
    .where(and(eq(kbDocuments.agentId, agentId), inArray(kbDocuments.kind, kinds), ne(kbDocuments.status, 'failed')))
  return Number(n)
}

export const fileCap = (plan: string) => FILE_CAP[plan] ?? FILE_CAP.trial
export const pageCap = (plan: string) => CRAWL_PAGE_CAP[plan] ?? CRAWL_PAGE_CAP.trial

/** Locks the agent (serialising admissions per agent) and refuses when the plan's cap is reached. */
async function admit(tx: Tx, accountId: string, agentId: string, kind: 'file' | 'page') {
  await loadAgent(tx, accountId, agentId, true)
  const plan = await planOf(tx, accountId)
  const cap = kind === 'file' ? fileCap(plan) : pageCap(plan)
  const used = await countDocs(tx, agentId, kind === 'file' ? ['file', 'text'] : ['page'])
  if (used >= cap) throw planLimitReached(kind === 'file' ? 'files' : 'crawl pages', cap, plan)
  return { plan, cap, used }
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
    const agent = await loadAgent(tx, accountId, agentId)
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

// ---------------------------------------------------------------------------------------------------
// Jobs

// Shown on the document and the crawl row: never an internal message (public-error.ts); the log keeps the detail.
// The upload limits' errors are written for the tenant.
const errorText = (e: unknown) =>
  e instanceof UploadLimitError || e instanceof UploadUnreadableError ? e.message : publicMessage(e)

async function markFailed(ex: Executor, docId: string, error: string) {
  await ex
    .update(kbDocuments)
    .set({ status: 'failed', error: error.slice(0, 1000), updatedAt: new Date() })
    .where(and(eq(kbDocuments.id, docId), eq(kbDocuments.status, 'processing')))
}

/** processing → indexed with text, chars, language and hash; the summary becomes stale in the same transaction. */
async function markIndexed(
  ctx: JobContext,
  row: DocRow,
  d: { text: string; title?: string | null; language: string | null },
) {
  await ctx.database.tx(async (tx) => {
    const [done] = await tx
      .update(kbDocuments)
      .set({
        status: 'indexed',
        error: null,
        text: d.text,
        chars: d.text.length,
        language: d.language,
        contentHash: contentHash(d.text),
        ...(d.title ? { title: d.title.slice(0, 500) } : {}),
        keepVerbatim: row.keepVerbatim || opensWithVerbatimPhrase(d.text),
        updatedAt: new Date(),
      })
      .where(and(eq(kbDocuments.id, row.id), eq(kbDocuments.status, 'processing')))
      .returning({ id: kbDocuments.id })
    if (done) await markSummaryStale(tx, { id: row.agentId, accountId: row.accountId })
  })
}

/** The kb.ingest job: a document still processing is extracted (upload), indexed (text) or fetched (page). */
export async function ingestDocument(ctx: JobContext, docId: string): Promise<void> {
  const [row] = await ctx.database.db.select().from(kbDocuments).where(eq(kbDocuments.id, docId))
  if (!row || row.status !== 'processing') return // already done: a repeated delivery does nothing
  try {
    if (row.kind === 'text') {
      const text = tidy(row.text ?? '')
      if (!text) throw new Error('The text is empty.')
      await markIndexed(ctx, row, { text, language: row.language })
    } else if (row.kind === 'file') {
      const data = row.blobKey ? await ctx.blobs.get(row.blobKey) : null
      if (!data) throw new Error('The uploaded original is missing from the blob store.')
      // A file past the limits fails here for good (caught below, the job finishes): no retry re-reads it.
      const out = await extractUpload(formatOfMime(row.mimeType), data, (line) =>
        ctx.log(`kb.ingest ${docId}: ${line}`),
      )
      if (!out.text) throw new Error('No text could be extracted from the file.')
      await markIndexed(ctx, row, { text: out.text, language: row.language ?? out.lang })
    } else {
      if (row.crawlId)
        await ctx.database.db
          .update(kbCrawls)
          .set({ status: 'running', startedAt: new Date() })
          .where(and(eq(kbCrawls.id, row.crawlId), eq(kbCrawls.status, 'queued')))
      try {
        const page = await fetchSinglePage(row.url ?? '', {
          allowPrivateHosts: ctx.config.allowPrivateHosts,
          field: 'url',
        })
        if (!page.text) throw new Error('The page has no readable text.')
        await markIndexed(ctx, row, {
          text: page.text,
          title: row.title === row.url ? page.title || null : null,
          language: row.language ?? page.lang,
        })
        if (row.crawlId)
          await ctx.database.db
            .update(kbCrawls)
            .set({ status: 'succeeded', pages: 1, finishedAt: new Date() })
            .where(eq(kbCrawls.id, row.crawlId))
      } catch (e) {
        if (row.crawlId)
          await ctx.database.db
            .update(kbCrawls)
            .set({ status: 'failed', error: errorText(e), finishedAt: new Date() })
            .where(eq(kbCrawls.id, row.crawlId))
        throw e
      }
    }
  } catch (e) {
    ctx.log(`kb.ingest ${docId} failed: ${internalDetail(e)}`)
    await markFailed(ctx.database.db, docId, errorText(e))
  }
}

class CrawlStop extends Error {}

/**
 * The kb.crawl job: a whole-site crawl, each page stored as a doc_c document (indexed) as it arrives,
 * within the agent's remaining page allowance and the kb_documents quota; the crawl row keeps status,
 * pages and why it stopped. Claimed by status, so a repeated delivery does nothing.
 */
export async function runCrawl(ctx: JobContext, crawlId: string): Promise<void> {
  const staleBefore = new Date(Date.now() - STALE_CRAWL_MS)
  const [crawl] = await ctx.database.db
    .update(kbCrawls)
    .set({ status: 'running', startedAt: new Date() })
    .where(
      and(
        eq(kbCrawls.id, crawlId),
        eq(kbCrawls.mode, 'site'),
        sql`(${kbCrawls.status} = 'queued' OR (${kbCrawls.status} = 'running' AND ${kbCrawls.startedAt} < ${staleBefore.toISOString()}::timestamptz))`,
      ),
    )
    .returning()
  if (!crawl) return
  const agent = { id: crawl.agentId, accountId: crawl.accountId }
  const plan = await planOf(ctx.database.db, crawl.accountId)
  const cap = pageCap(plan)
  const allowance = cap - (await countDocs(ctx.database.db, crawl.agentId, ['page']))
  let stored = 0
  let stopReason: string | null = null
  crawlStarted(agent.id, crawlId)
  try {
    if (allowance <= 0) throw new CrawlStop(`The ${plan} plan's cap of ${cap} crawl pages is reached.`)
    const result = await crawlSite(crawl.startUrl, {
      allowPrivateHosts: ctx.config.allowPrivateHosts,
      maxPages: allowance,
      maxDepth: CRAWL_DEPTH,
      deadlineMs: ctx.config.crawlDeadlineMs,
      field: 'url',
      onPage: async (page) => {
        if (!page.text) return
        await ctx.database.tx(async (tx) => {
          // Parallel crawls of one agent share its page cap: each page is admitted under the agent's row lock.
          try {
            await admit(tx, agent.accountId, agent.id, 'page')
          } catch (e) {
            if (e instanceof ApiError && e.code === 'plan_limit_reached')
              throw new CrawlStop(`Stopped at the ${plan} plan's cap of ${cap} crawl pages.`)
            throw e
          }
          try {
            await consumeQuota(tx, crawl.accountId, 'kb_documents')
          } catch (e) {
            if (e instanceof ApiError && e.code === 'quota_exceeded')
              throw new CrawlStop(`Stopped after ${stored} pages: ${e.message}`)
            throw e
          }
          await tx.insert(kbDocuments).values({
            id: await nextDocumentId(tx, 'page'),
            agentId: agent.id,
            accountId: agent.accountId,
            kind: 'page',
            source: 'crawl',
            crawlId,
            title: page.title || page.url,
            url: page.url,
            status: 'indexed',
            text: page.text,
            chars: page.text.length,
            language: page.lang,
            contentHash: contentHash(page.text),
            keepVerbatim: opensWithVerbatimPhrase(page.text),
          })
          await tx
            .update(kbCrawls)
            .set({ pages: sql`${kbCrawls.pages} + 1` })
            .where(eq(kbCrawls.id, crawlId))
          await markSummaryStale(tx, agent)
        })
        stored++
        crawlPageDone(agent.id, crawlId)
      },
    })
    if (stored >= allowance) stopReason = `Stopped at the ${plan} plan's cap of ${cap} crawl pages.`
    else if (result.stopped === 'deadline') stopReason = `Stopped at the crawl's time limit after ${stored} pages.`
  } catch (e) {
    if (e instanceof CrawlStop) stopReason = e.message
    else {
      ctx.log(`kb.crawl ${crawlId} failed: ${internalDetail(e)}`)
      await ctx.database.db
        .update(kbCrawls)
        .set({ status: 'failed', error: errorText(e).slice(0, 1000), finishedAt: new Date() })
        .where(eq(kbCrawls.id, crawlId))
      return
    }
  } finally {
    crawlFinished(agent.id, crawlId)
  }
  await ctx.database.db
    .update(kbCrawls)
    .set({ status: stored > 0 || !stopReason ? 'succeeded' : 'failed', error: stopReason, finishedAt: new Date() })
    .where(eq(kbCrawls.id, crawlId))
}

/** One crawl of this account (for GET surfaces that want to show a crawl's outcome). */
export async function readCrawl(ex: Executor, accountId: string, crawlId: string) {
  const [row] = await ex
    .select()
    .from(kbCrawls)
    .where(and(eq(kbCrawls.id, crawlId), eq(kbCrawls.accountId, accountId)))
  return row ?? null
}
