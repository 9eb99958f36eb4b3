// The ingestion jobs: an added document is fetched or extracted, tidied and indexed; a site crawl stores
// its pages as documents as they arrive.
import { and, eq, sql } from 'drizzle-orm'
import type { Executor } from '~/db/client'
import { retryTransient } from '~/db/transient'
import { kbCrawls, kbDocuments } from '~/db/schema'
import type { JobContext } from '~/kit/job'
import { ApiError } from '~/lib/errors'
import { nextDocumentId } from '~/domain/agents/create'
import { consumeQuota } from '~/domain/limits/quotas'
import { crawlSite, fetchSinglePage } from './crawler'
import { crawlFinished, crawlPageDone, crawlStarted } from './crawl-progress'
import { UploadLimitError, UploadUnreadableError, tidy } from './document-limits'
import { internalDetail, publicMessage } from './public-error'
import { lockKnowledge, markSummaryStale } from './summary'
import { contentHash, opensWithVerbatimPhrase } from './document-text'
import { extractUploadBounded } from './document-extract'
import { formatOfMime } from './upload-format'
import { admit, countDocs, pageCap, planOf } from './admission'

type DocRow = typeof kbDocuments.$inferSelect

export const INGEST_JOB = 'kb.ingest'
export const CRAWL_JOB = 'kb.crawl'

const CRAWL_DEPTH = 3
const STALE_CRAWL_MS = 15 * 60_000

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
  d: {
    text: string
    title?: string | null
    language: string | null
    fetched?: { etag: string | null; lastModified: string | null }
  },
) {
  await retryTransient(() =>
    ctx.database.tx(async (tx) => {
      await lockKnowledge(tx, row.agentId)
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
          ...(d.fetched ? { etag: d.fetched.etag, lastModified: d.fetched.lastModified, fetchedAt: new Date() } : {}),
          updatedAt: new Date(),
        })
        .where(and(eq(kbDocuments.id, row.id), eq(kbDocuments.status, 'processing')))
        .returning({ id: kbDocuments.id })
      if (done) await markSummaryStale(tx, { id: row.agentId, accountId: row.accountId })
    }),
  )
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
      const out = await extractUploadBounded(formatOfMime(row.mimeType), data, (line) =>
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
          fetched: { etag: page.etag, lastModified: page.lastModified },
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
            etag: page.etag,
            lastModified: page.lastModified,
            fetchedAt: new Date(),
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
