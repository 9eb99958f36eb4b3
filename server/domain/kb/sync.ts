// The knowledge sync (decisions "Knowledge sync"): every URL-sourced document of an agent is visited again,
// fetching as little as possible, and only what really changed is re-ingested.
//
// Per page, in order: a sitemap <lastmod> older than the last fetch skips the page without a request; else
// a conditional GET (If-None-Match, If-Modified-Since from the last answer); a 304 is not_modified; a 200 is
// compared by the hash of its extracted main text (the extractor drops navigation, header, footer and
// asides, so a changed footer or date stamp there is not a change) and re-ingested only when it differs;
// a 404 or 410 is removed (deleted with deletion remove, kept with keep). The links of every page that
// answered 200, and the sitemap's URLs, re-discover pages of the agent's site sources, added within the
// plan's page cap. Every fetch goes through the crawler's guard, robots.txt, caps and deadline.
//
// One sync per agent at a time: a sync is created under the agent's row lock only when none runs (409
// sync_in_progress), which is also what makes a scheduled sync run once however many instances sweep.
import { randomUUID } from 'node:crypto'
import { and, desc, eq, inArray, max, sql } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { agents, kbCrawls, kbDocuments, kbSyncs } from '~/db/schema'
import { retryTransient } from '~/db/transient'
import { nextDocumentId } from '~/domain/agents/create'
import { loadAgent } from '~/domain/agents/rows'
import { emitEvent } from '~/domain/events/emit'
import { consumeQuota } from '~/domain/limits/quotas'
import type { JobContext } from '~/kit/job'
import { afterPosition, keysetPage, type KeysetRequest } from '~/lib/keyset'
import { ApiError, apiError, Errors } from '~/lib/errors'
import { admit, countDocs, pageCap, planOf } from './admission'
import { CRAWL_LIMITS, notAPage, revisitPage, robotsFor, sameSite, type CrawledPage } from './crawler'
import { contentHash, opensWithVerbatimPhrase } from './document-text'
import { FetchError } from './safe-fetch'
import { internalDetail, publicMessage } from './public-error'
import { loadSitemap, SITEMAP_LIMITS } from './sitemap'
import { REINDEX_JOB, acceptReindex, lockKnowledge, markSummaryStale } from './summary'
import { isDue } from './sync-schedule'
import { kbSyncOf, type KbSync } from './sync-schemas'

export const SYNC_JOB = 'kb.sync'
/** A sync still running after this long was abandoned by its instance (the crawl deadline is 10 minutes). */
export const SYNC_STALE_MS = 15 * 60_000
const CONCURRENCY = 2
/** Origins whose sitemap and robots.txt one sync reads: an agent's pages come from a few sites. */
const MAX_ORIGINS = 20
/** Candidate links kept for re-discovery before the queue (itself 10× the page cap) takes its share. */
const MAX_DISCOVERED = 100_000

type SyncRow = typeof kbSyncs.$inferSelect

export function presentSync(r: SyncRow): KbSync {
  return {
    sync_id: r.id,
    agent_id: r.agentId,
    trigger: r.trigger as KbSync['trigger'],
    status: r.status as KbSync['status'],
    pages_checked: r.pagesChecked,
    not_modified: r.notModified,
    unchanged: r.unchanged,
    added: r.added,
    changed: r.changed,
    removed: r.removed,
    summary_rebuild: r.summaryRebuild,
    error: r.error,
    started_at: r.startedAt.toISOString(),
    finished_at: r.finishedAt?.toISOString() ?? null,
  }
}

const staleBefore = () => new Date(Date.now() - SYNC_STALE_MS)

/**
 * Creates a running sync for the agent, under its row lock. A sync already running (and not abandoned):
 * 409 sync_in_progress for a manual request, null for the scheduler; a scheduled one is also re-checked for
 * being due under the lock, so two instances that both saw it due create one. An abandoned sync is failed.
 */
export async function createSync(
  database: Database,
  accountId: string,
  agentId: string,
  trigger: 'manual' | 'schedule',
): Promise<SyncRow | null> {
  return database.tx(async (tx) => {
    const agent = await loadAgent(tx, accountId, agentId, true)
    const [running] = await tx
      .select()
      .from(kbSyncs)
      .where(and(eq(kbSyncs.agentId, agentId), eq(kbSyncs.status, 'running')))
      .orderBy(desc(kbSyncs.startedAt))
      .limit(1)
    if (running && running.startedAt > staleBefore()) {
      if (trigger === 'schedule') return null
      throw apiError('sync_in_progress', `Knowledge sync ${running.id} of this agent is running.`)
    }
    if (running)
      await tx
        .update(kbSyncs)
        .set({ status: 'failed', error: 'The sync was interrupted.', finishedAt: new Date() })
        .where(and(eq(kbSyncs.agentId, agentId), eq(kbSyncs.status, 'running')))
    if (trigger === 'schedule' && !isDue(agentId, kbSyncOf(agent.settings).schedule, await lastFetch(tx, agentId)))
      return null
    const [row] = await tx.insert(kbSyncs).values({ accountId, agentId, trigger }).returning()
    return row
  })
}

/** The latest moment the agent's pages were fetched: its newest sync's start or its newest page fetch. */
async function lastFetch(ex: Executor, agentId: string): Promise<number | null> {
  const [s] = await ex
    .select({ at: max(kbSyncs.startedAt) })
    .from(kbSyncs)
    .where(eq(kbSyncs.agentId, agentId))
  const [d] = await ex
    .select({ at: max(kbDocuments.fetchedAt) })
    .from(kbDocuments)
    .where(and(eq(kbDocuments.agentId, agentId), eq(kbDocuments.kind, 'page'), sql`${kbDocuments.url} IS NOT NULL`))
  const times = [s?.at, d?.at].filter((t): t is Date => !!t).map((t) => new Date(t).getTime())
  return times.length ? Math.max(...times) : null
}

/** POST /agents/{agt}/kb/sync: a manual sync, sent to the job queue; 409 while one runs. */
export async function requestSync(
  runtime: { database: Database; queue: { send: JobContext['send'] } },
  accountId: string,
  agentId: string,
): Promise<KbSync> {
  const row = await createSync(runtime.database, accountId, agentId, 'manual')
  if (!row) throw new Error('createSync returned no manual sync')
  try {
    await runtime.queue.send(SYNC_JOB, { sync_id: row.id })
  } catch (e) {
    // Not left running (and blocking the next request) when no job could be queued.
    await runtime.database.db
      .update(kbSyncs)
      .set({ status: 'failed', error: 'The job queue did not accept the sync.', finishedAt: new Date() })
      .where(eq(kbSyncs.id, row.id))
    throw e
  }
  return presentSync(row)
}

export async function getSync(ex: Executor, accountId: string, agentId: string, syncId: string): Promise<KbSync> {
  await loadAgent(ex, accountId, agentId)
  const [row] = await ex
    .select()
    .from(kbSyncs)
    .where(and(eq(kbSyncs.id, syncId), eq(kbSyncs.agentId, agentId), eq(kbSyncs.accountId, accountId)))
  if (!row) throw Errors.notFound('Knowledge sync')
  return presentSync(row)
}

export async function listSyncs(ex: Executor, accountId: string, agentId: string, req: KeysetRequest) {
  await loadAgent(ex, accountId, agentId)
  const rows = await ex
    .select()
    .from(kbSyncs)
    .where(
      and(
        eq(kbSyncs.accountId, accountId),
        eq(kbSyncs.agentId, agentId),
        afterPosition(req, kbSyncs.startedAt, kbSyncs.id),
      ),
    )
    .orderBy(desc(kbSyncs.startedAt), desc(kbSyncs.id))
    .limit(req.binding.limit + 1)
  return keysetPage(req, rows, (r) => [r.startedAt.toISOString(), r.id], presentSync)
}

// ---- The scheduler ----

/** Agents with a schedule looked at per sweep; the rest wait for the next sweep. */
const SWEEP_BATCH = 200

/** One sweep of every instance: creates the due scheduled syncs (at most once each, createSync) and queues them. */
export async function sweepScheduledSyncs(ctx: Pick<JobContext, 'database' | 'send' | 'log'>): Promise<number> {
  const candidates = await ctx.database.db
    .select({ id: agents.id, accountId: agents.accountId, settings: agents.settings })
    .from(agents)
    .where(sql`${agents.settings}->'kb_sync'->>'schedule' IN ('daily', 'weekly')`)
    .orderBy(agents.id)
    .limit(SWEEP_BATCH)
  let started = 0
  for (const a of candidates) {
    // Being due is decided under the agent's lock only (createSync), never from an earlier read: two
    // instances sweeping at once then create one sync. A sweep costs one short locking transaction per
    // scheduled agent, at most SWEEP_BATCH a minute per instance.
    if (!(await hasUrlDocuments(ctx.database.db, a.id))) continue
    try {
      const row = await createSync(ctx.database, a.accountId, a.id, 'schedule')
      if (!row) continue
      await ctx.send(SYNC_JOB, { sync_id: row.id })
      started++
    } catch (e) {
      ctx.log(`kb sync sweep: ${a.id}: ${internalDetail(e)}`)
    }
  }
  return started
}

async function hasUrlDocuments(ex: Executor, agentId: string) {
  const [row] = await ex
    .select({ id: kbDocuments.id })
    .from(kbDocuments)
    .where(and(eq(kbDocuments.agentId, agentId), eq(kbDocuments.kind, 'page'), sql`${kbDocuments.url} IS NOT NULL`))
    .limit(1)
  return !!row
}

// ---- The sync itself (the kb.sync job) ----

interface SiteSource {
  /** The start URL of the crawl or build the pages came from. */
  root: URL
  crawlId: string
  source: 'crawl' | 'build'
}

interface Tally {
  pagesChecked: number
  notModified: number
  unchanged: number
  added: string[]
  changed: string[]
  removed: string[]
  /** Documents written or deleted: the summary is stale and may be rebuilt. */
  documentsChanged: number
}

/** Runs one sync. Claimed first, so a repeated delivery of a sync that another worker holds does nothing. */
export async function runSync(ctx: JobContext, syncId: string): Promise<void> {
  const [sync] = await ctx.database.db
    .update(kbSyncs)
    .set({ claimedAt: new Date() })
    .where(
      and(
        eq(kbSyncs.id, syncId),
        eq(kbSyncs.status, 'running'),
        sql`(${kbSyncs.claimedAt} IS NULL OR ${kbSyncs.claimedAt} < ${staleBefore().toISOString()}::timestamptz)`,
      ),
    )
    .returning()
  if (!sync) return
  const tally: Tally = {
    pagesChecked: 0,
    notModified: 0,
    unchanged: 0,
    added: [],
    changed: [],
    removed: [],
    documentsChanged: 0,
  }
  let error: string | null = null
  let setting = kbSyncOf(null)
  try {
    const [agent] = await ctx.database.db.select().from(agents).where(eq(agents.id, sync.agentId))
    if (!agent) return
    setting = kbSyncOf(agent.settings)
    await syncPages(ctx, agent, setting.deletion, tally)
  } catch (e) {
    ctx.log(`kb.sync ${syncId} failed: ${internalDetail(e)}`)
    error = publicMessage(e).slice(0, 1000)
  }
  await finishSync(ctx, sync, tally, error, setting.reindex)
}

async function finishSync(ctx: JobContext, sync: SyncRow, tally: Tally, error: string | null, reindex: boolean) {
  const agent = { id: sync.agentId, accountId: sync.accountId }
  // The rebuild is the summary job of POST kb/reindex: billable engine work, so it follows the balance check
  // and takes a unit of the reindexes quota; when either refuses, the summary stays stale (summary_rebuild false).
  let requestId: string | null = null
  if (tally.documentsChanged > 0 && reindex) {
    const id = randomUUID()
    try {
      await retryTransient(() => ctx.database.tx((tx) => acceptReindex(tx, agent, id)))
      requestId = id
    } catch (e) {
      if (!(e instanceof ApiError)) throw e
      ctx.log(`kb.sync ${sync.id}: no summary rebuild: ${e.code}`)
    }
  }
  await retryTransient(() =>
    ctx.database.tx(async (tx) => {
      const [done] = await tx
        .update(kbSyncs)
        .set({
          status: error ? 'failed' : 'succeeded',
          error,
          pagesChecked: tally.pagesChecked,
          notModified: tally.notModified,
          unchanged: tally.unchanged,
          added: tally.added,
          changed: tally.changed,
          removed: tally.removed,
          summaryRebuild: requestId !== null,
          finishedAt: new Date(),
        })
        .where(and(eq(kbSyncs.id, sync.id), eq(kbSyncs.status, 'running')))
        .returning()
      if (done) await emitEvent(tx, { accountId: sync.accountId, type: 'kb.synced', data: presentSync(done) })
    }),
  )
  if (requestId) await ctx.send(REINDEX_JOB, { agent_id: agent.id, request_id: requestId })
}

type AgentRowLite = typeof agents.$inferSelect
type PageDoc = Pick<
  typeof kbDocuments.$inferSelect,
  'id' | 'url' | 'etag' | 'lastModified' | 'fetchedAt' | 'contentHash' | 'title' | 'crawlId' | 'language'
>

async function syncPages(ctx: JobContext, agent: AgentRowLite, deletion: 'keep' | 'remove', tally: Tally) {
  const db = ctx.database.db
  const deadline = Date.now() + ctx.config.crawlDeadlineMs
  const fetchOpts = () => ({
    allowPrivateHosts: ctx.config.allowPrivateHosts,
    timeoutMs: Math.max(1, Math.min(10_000, deadline - Date.now())),
  })
  const docs: PageDoc[] = await db
    .select({
      id: kbDocuments.id,
      url: kbDocuments.url,
      etag: kbDocuments.etag,
      lastModified: kbDocuments.lastModified,
      fetchedAt: kbDocuments.fetchedAt,
      // Pages stored before hashes were kept get theirs from the text in the database: a sync never holds
      // every page's text (up to 1,000 pages of 200,000 characters) in memory.
      contentHash: sql<string>`coalesce(${kbDocuments.contentHash}, encode(sha256(convert_to(coalesce(${kbDocuments.text}, ''), 'UTF8')), 'hex'))`,
      title: kbDocuments.title,
      crawlId: kbDocuments.crawlId,
      language: kbDocuments.language,
    })
    .from(kbDocuments)
    .where(
      and(
        eq(kbDocuments.agentId, agent.id),
        eq(kbDocuments.kind, 'page'),
        eq(kbDocuments.status, 'indexed'),
        sql`${kbDocuments.url} IS NOT NULL`,
      ),
    )
    .orderBy(kbDocuments.createdAt, kbDocuments.id)
  const sites = await siteSources(db, agent, docs)
  // Every page URL of the agent, failed and processing ones included, is known: re-discovery adds none twice.
  const known = new Set(
    (
      await db
        .select({ url: kbDocuments.url })
        .from(kbDocuments)
        .where(and(eq(kbDocuments.agentId, agent.id), eq(kbDocuments.kind, 'page')))
    ).map((d) => d.url as string),
  )

  // Sitemaps and robots.txt, once per origin.
  const origins = [
    ...new Set([...docs.map((d) => new URL(d.url as string).origin), ...sites.map((s) => s.root.origin)]),
  ]
  const lastmods = new Map<string, number | null>()
  const discovered: string[] = []
  for (const origin of origins.slice(0, MAX_ORIGINS)) {
    // One sitemap's worth of entries in all (SITEMAP_LIMITS.maxEntries), however many origins.
    if (lastmods.size >= SITEMAP_LIMITS.maxEntries) break
    for (const entry of await loadSitemap(origin, fetchOpts())) {
      lastmods.set(entry.url, entry.lastmod)
      if (!known.has(entry.url)) discovered.push(entry.url)
    }
  }
  const robots = new Map<string, Promise<(url: string) => boolean>>()
  const allowed = (url: URL) => {
    let check = robots.get(url.origin)
    if (!check) {
      check = robotsFor(url.origin, fetchOpts())
      robots.set(url.origin, check)
    }
    return check.then((ok) => ok(url.href))
  }

  // 1. Every known page.
  await eachBounded(docs, deadline, async (doc) => {
    const url = new URL(doc.url as string)
    tally.pagesChecked++
    const lastmod = lastmods.get(url.href)
    if (lastmod != null && doc.fetchedAt && lastmod < doc.fetchedAt.getTime()) {
      tally.notModified++
      return
    }
    if (!(await allowed(url))) return
    let result: Awaited<ReturnType<typeof revisitPage>>
    try {
      result = await revisitPage(url.href, { etag: doc.etag, lastModified: doc.lastModified }, fetchOpts())
    } catch (e) {
      if (e instanceof FetchError && e.reason === 'http_status' && (e.status === 404 || e.status === 410)) {
        tally.removed.push(url.href)
        if (deletion === 'remove' && (await deleteDocument(ctx, agent, doc.id))) tally.documentsChanged++
        return
      }
      // A page that fails otherwise (timeout, 5xx, a refused redirect) keeps what it had: the next sync tries again.
      ctx.log(`kb.sync ${agent.id}: ${url.href}: ${internalDetail(e)}`)
      return
    }
    if (result.status === 'not_modified') {
      tally.notModified++
      await db.update(kbDocuments).set({ fetchedAt: new Date() }).where(eq(kbDocuments.id, doc.id))
      return
    }
    const page = result.page
    // The links of a page that answered are where new pages show up (an added link changes the page).
    if (siteOf(sites, new URL(page.url)) && discovered.length < MAX_DISCOVERED) discovered.push(...page.links)
    const before = doc.contentHash
    if (!page.text || !sameSite(new URL(page.url), url) || contentHash(page.text) === before) {
      tally.unchanged++
      await db
        .update(kbDocuments)
        .set({ etag: page.etag, lastModified: page.lastModified, fetchedAt: new Date() })
        .where(eq(kbDocuments.id, doc.id))
      return
    }
    if (await reingest(ctx, agent, doc, page)) {
      tally.changed.push(url.href)
      tally.documentsChanged++
    }
  })

  // 2. New pages of the site sources, breadth-first from what the sitemaps and the answered pages link to.
  if (!sites.length) return
  const plan = await planOf(db, agent.accountId)
  let allowance = pageCap(plan) - (await countDocs(db, agent.id, ['page']))
  const queueCap = pageCap(plan) * CRAWL_LIMITS.queueFactor
  const seen = new Set(known)
  const queue: string[] = []
  const enqueue = (links: string[]) => {
    for (const link of links) {
      if (queue.length >= queueCap) return
      if (link.length > CRAWL_LIMITS.maxUrlChars) continue
      let u: URL
      try {
        u = new URL(link)
      } catch {
        continue
      }
      u.hash = ''
      if (seen.has(u.href) || notAPage(u) || !siteOf(sites, u)) continue
      seen.add(u.href)
      queue.push(u.href)
    }
  }
  enqueue(discovered)
  // Failed fetches cost requests too (the crawl's bound: three fetches per page it may keep).
  let fetches = Math.max(0, allowance) * 3
  while (queue.length && allowance > 0 && fetches > 0 && Date.now() < deadline) {
    const batch = queue.splice(0, Math.min(CONCURRENCY, allowance, fetches))
    fetches -= batch.length
    const pages = await Promise.all(batch.map((href) => fetchNew(href, allowed, fetchOpts)))
    for (const page of pages) {
      if (!page || allowance <= 0) continue
      const final = new URL(page.url)
      const site = siteOf(sites, final)
      if (!site || known.has(final.href)) continue
      known.add(final.href)
      seen.add(final.href)
      const stored = await addPage(ctx, agent, site, page)
      if (stored === 'stop') {
        allowance = 0
        break
      }
      allowance--
      tally.pagesChecked++
      tally.added.push(final.href)
      tally.documentsChanged++
      enqueue(page.links)
    }
  }
}

/** Runs `fn` over the items, CONCURRENCY at a time, until the deadline. */
async function eachBounded<T>(items: T[], deadline: number, fn: (item: T) => Promise<void>) {
  let next = 0
  const worker = async () => {
    while (next < items.length && Date.now() < deadline) await fn(items[next++])
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
}

function siteOf(sites: SiteSource[], u: URL): SiteSource | undefined {
  return sites.find((s) => sameSite(s.root, u) && (u.protocol === 'http:' || u.protocol === 'https:'))
}

/** The site crawls and builds the agent's pages came from (their start URLs), for re-discovery. */
async function siteSources(ex: Executor, agent: AgentRowLite, docs: PageDoc[]): Promise<SiteSource[]> {
  const crawlIds = [...new Set(docs.map((d) => d.crawlId).filter((c): c is string => !!c))]
  const out: SiteSource[] = []
  const crawls = crawlIds.some((c) => c.startsWith('crl_'))
    ? await ex
        .select({ id: kbCrawls.id, startUrl: kbCrawls.startUrl })
        .from(kbCrawls)
        .where(
          and(
            eq(kbCrawls.agentId, agent.id),
            eq(kbCrawls.mode, 'site'),
            inArray(
              kbCrawls.id,
              crawlIds.filter((c) => c.startsWith('crl_')),
            ),
          ),
        )
    : []
  for (const c of crawls) {
    try {
      out.push({ root: new URL(c.startUrl), crawlId: c.id, source: 'crawl' })
    } catch {}
  }
  const build = crawlIds.find((c) => c.startsWith('bld_'))
  if (build && agent.websiteUrl) {
    try {
      out.push({ root: new URL(agent.websiteUrl), crawlId: build, source: 'build' })
    } catch {}
  }
  return out
}

async function fetchNew(
  href: string,
  allowed: (u: URL) => Promise<boolean>,
  opts: () => { allowPrivateHosts: readonly string[]; timeoutMs: number },
): Promise<(CrawledPage & { links: string[] }) | null> {
  try {
    if (!(await allowed(new URL(href)))) return null
    const r = await revisitPage(href, { etag: null, lastModified: null }, opts())
    return r.status === 'fetched' && r.page.text ? r.page : null
  } catch {
    return null
  }
}

/** Writes the page's new text over the document (the crawl's fields), making the summary stale. */
async function reingest(ctx: JobContext, agent: AgentRowLite, doc: PageDoc, page: CrawledPage): Promise<boolean> {
  return retryTransient(() =>
    ctx.database.tx(async (tx) => {
      await lockKnowledge(tx, agent.id)
      const [done] = await tx
        .update(kbDocuments)
        .set({
          text: page.text,
          chars: page.text.length,
          contentHash: contentHash(page.text),
          // A title the user gave (not the page's own or its URL) is kept.
          ...(doc.title === doc.url || doc.title === null ? { title: page.title || page.url } : {}),
          language: doc.language ?? page.lang,
          etag: page.etag,
          lastModified: page.lastModified,
          fetchedAt: new Date(),
          keepVerbatim: sql`${kbDocuments.keepVerbatim} OR ${opensWithVerbatimPhrase(page.text)}`,
          updatedAt: new Date(),
        })
        .where(and(eq(kbDocuments.id, doc.id), eq(kbDocuments.status, 'indexed')))
        .returning({ id: kbDocuments.id })
      if (done) await markSummaryStale(tx, agent)
      return !!done
    }),
  )
}

async function deleteDocument(ctx: JobContext, agent: AgentRowLite, docId: string): Promise<boolean> {
  return retryTransient(() =>
    ctx.database.tx(async (tx) => {
      await lockKnowledge(tx, agent.id)
      const gone = await tx
        .delete(kbDocuments)
        .where(and(eq(kbDocuments.id, docId), eq(kbDocuments.agentId, agent.id)))
        .returning({ id: kbDocuments.id })
      if (gone.length) await markSummaryStale(tx, agent)
      return gone.length > 0
    }),
  )
}

/** A new page of a site source, admitted like a crawled page (page cap, kb_documents quota); 'stop' past either. */
async function addPage(
  ctx: JobContext,
  agent: AgentRowLite,
  site: SiteSource,
  page: CrawledPage,
): Promise<'added' | 'stop'> {
  try {
    await ctx.database.tx(async (tx) => {
      await admit(tx, agent.accountId, agent.id, 'page')
      await consumeQuota(tx, agent.accountId, 'kb_documents')
      await tx.insert(kbDocuments).values({
        id: await nextDocumentId(tx, 'page'),
        agentId: agent.id,
        accountId: agent.accountId,
        kind: 'page',
        source: site.source,
        crawlId: site.crawlId,
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
      await markSummaryStale(tx, agent)
    })
    return 'added'
  } catch (e) {
    if (e instanceof ApiError && (e.code === 'plan_limit_reached' || e.code === 'quota_exceeded')) return 'stop'
    throw e
  }
}
