// The knowledge base's crawler: breadth-first over one site, robots.txt honoured, every fetch through
// safeFetch (so every hop is address-checked and capped), HTML and plain text turned into clean text.
//
// Same site means the same host name, where "www." and the bare name count as one (sites commonly
// serve one and redirect from the other), on the same port, over http or https. If the start page
// itself redirects to another host, that host joins the site: the owner's redirect names where the
// site lives. Anything else off-site is ignored without fetching it.
import robotsParser from 'robots-parser'
import { decodeBody, extractPage } from './extract'
import { FETCH_DEFAULTS, FetchError, safeFetch } from './safe-fetch'
import { assertFetchableUrl, resolvePublic, type Resolver } from './url-guard'

export interface CrawledPage {
  url: string
  title: string
  text: string
  depth: number
  lang: string | null
  /** The answer's validators, kept for the next sync's conditional request (decisions "Knowledge sync"). */
  etag: string | null
  lastModified: string | null
}

export interface SkippedPage {
  url: string
  reason: string
}

export interface FetchPageOptions {
  allowPrivateHosts: readonly string[]
  userAgent?: string
  timeoutMs?: number
  maxBytes?: number
  resolver?: Resolver
  field?: string
}

export interface CrawlOptions extends FetchPageOptions {
  /** The plan's page cap (trial 50, starter 1000 per agent). */
  maxPages: number
  /** Link hops from the start page; the start page is depth 0. */
  maxDepth?: number
  concurrency?: number
  /** The whole crawl's time budget (decisions "Limits on hostile work": 10 minutes); past it the crawl ends with the pages so far. */
  deadlineMs?: number
  /**
   * Called once per kept page as it completes; a throw stops the crawl and rejects crawlSite. With it,
   * pages are handed over one at a time and not kept (`pages` is empty): the caller writes each away.
   */
  onPage?: (page: CrawledPage) => Promise<void>
  /** Stops the crawl between pages (a deleted agent, a shutting-down worker); crawlSite rejects with its reason. */
  signal?: AbortSignal
}

export interface CrawlResult {
  /** The kept pages in breadth-first order, only when no onPage was given. */
  pages: CrawledPage[]
  skipped: SkippedPage[]
  /** Pages kept (handed to onPage or listed in pages). */
  kept: number
  /** Why the crawl ended early: the deadline, or null when it ran out of links or reached its caps. */
  stopped: 'deadline' | null
}

const DEFAULT_UA = 'SvcCrawler/1.0'
const TEXT_TYPES = new Set(['text/html', 'application/xhtml+xml', 'text/plain'])
// Links that are obviously not pages are not worth a request.
const NOT_PAGES =
  /\.(?:png|jpe?g|gif|webp|svg|ico|bmp|tiff?|pdf|zip|gz|tgz|rar|7z|exe|dmg|msi|mp[34]|m4a|wav|ogg|webm|avi|mov|woff2?|ttf|eot|css|js|json|xml|rss|atom|docx?|xlsx?|pptx?)$/i
const ROBOTS_MAX_BYTES = 512 * 1024
// Failed fetches cost requests too; this bounds the total work on a site that is mostly errors.
const MAX_FETCHES_PER_PAGE = 3
// A big broken site could otherwise fill memory with skip reasons.
const MAX_SKIPPED = 500

/**
 * Limits on hostile work (decisions "Security rules"): what one page and one crawl may cost. A page is
 * read up to PAGE_MAX_BYTES and the rest never received; the HTML handed to the extractor is cut after
 * PAGE_MAX_TAGS tags (parsing cost grows with the element count, far faster than with the bytes);
 * a page keeps PAGE_MAX_LINKS links and PAGE_MAX_TEXT characters of text; the queue holds at most
 * QUEUE_FACTOR × maxPages URLs, each at most MAX_URL_CHARS long.
 */
export const CRAWL_LIMITS = {
  pageMaxBytes: 1024 * 1024,
  pageMaxTags: 5_000,
  pageMaxLinks: 500,
  pageMaxText: 200_000,
  queueFactor: 10,
  maxUrlChars: 2048,
  deadlineMs: 10 * 60_000,
} as const

/** Crawls `startUrl`'s site; an unacceptable start URL throws ApiError invalid_url before any request. */
export async function crawlSite(startUrl: string, opts: CrawlOptions): Promise<CrawlResult> {
  const ua = opts.userAgent ?? DEFAULT_UA
  const maxDepth = opts.maxDepth ?? 3
  const concurrency = Math.max(1, opts.concurrency ?? 2)
  const deadline = Date.now() + (opts.deadlineMs ?? CRAWL_LIMITS.deadlineMs)
  const start = assertFetchableUrl(startUrl, opts)
  await resolvePublic(start.hostname, opts)
  start.hash = ''

  const maxFetches = opts.maxPages * MAX_FETCHES_PER_PAGE
  const queueCap = opts.maxPages * CRAWL_LIMITS.queueFactor
  // Every URL in `seen` was queued (or is a kept page's final URL); at most maxFetches ever leave the
  // queue and queueCap wait in it, so this bound only makes explicit what the queue cap implies.
  const seenCap = queueCap + maxFetches + opts.maxPages
  const sites = new Set([siteKey(start)])
  const robots = new Map<string, Promise<RobotsCheck>>()
  const seen = new Set<string>([start.href])
  const queue = new Fifo<{ url: string; depth: number }>()
  queue.push({ url: start.href, depth: 0 })
  const pages: CrawledPage[] = []
  const skipped: SkippedPage[] = []
  const skip = (url: string, reason: string): false => {
    if (skipped.length < MAX_SKIPPED) skipped.push({ url, reason })
    return false
  }
  let reserved = 0 // pages kept plus fetches in flight: keeps concurrency from overshooting maxPages
  let keptCount = 0
  let fetches = 0
  let inFlight = 0
  let failure: unknown = null
  let stopped: CrawlResult['stopped'] = null
  // Each fetch gets what is left of the crawl's time, so the last ones end at the deadline too.
  const fetchOpts = (): FetchPageOptions => ({
    ...opts,
    timeoutMs: Math.max(1, Math.min(opts.timeoutMs ?? FETCH_DEFAULTS.timeoutMs, deadline - Date.now())),
  })

  const allowedByRobots = (url: URL) => {
    let check = robots.get(url.origin)
    if (!check) {
      check = loadRobots(url.origin, ua, fetchOpts())
      robots.set(url.origin, check)
    }
    return check.then((isAllowed) => isAllowed(url.href))
  }

  const kept = new Set<string>()
  /** Whether the page was kept. */
  const visit = async (item: { url: string; depth: number }): Promise<boolean> => {
    const url = new URL(item.url)
    if (!(await allowedByRobots(url))) return skip(item.url, 'robots_disallowed')
    let page: CrawledPage & { links: string[] }
    try {
      page = await fetchPage(item.url, item.depth, fetchOpts(), ua)
    } catch (e) {
      // The start page failing is the crawl failing: there is no site to report on.
      if (item.depth === 0) throw e
      return skip(item.url, reasonOf(e))
    }
    const final = new URL(page.url)
    if (item.depth === 0) sites.add(siteKey(final))
    else if (!sites.has(siteKey(final))) return skip(item.url, 'off_site_redirect')
    // Two links redirecting to one page keep it once.
    if (kept.has(final.href) || keptCount >= opts.maxPages) return false
    kept.add(final.href)
    seen.add(final.href)
    keptCount++
    const { links, ...result } = page
    if (opts.onPage) await opts.onPage(result)
    else pages.push(result)
    if (item.depth >= maxDepth) return true
    for (const link of links) {
      if (queue.length >= queueCap || seen.size >= seenCap) break
      if (link.length > CRAWL_LIMITS.maxUrlChars) continue
      const u = new URL(link)
      if (!sites.has(siteKey(u)) || NOT_PAGES.test(u.pathname) || seen.has(u.href)) continue
      seen.add(u.href)
      queue.push({ url: u.href, depth: item.depth + 1 })
    }
    return true
  }

  // Workers take from the front of one FIFO, so pages are fetched in breadth-first order.
  const worker = async () => {
    while (!failure) {
      if (opts.signal?.aborted) {
        failure = opts.signal.reason ?? new Error('The crawl was aborted.')
        return
      }
      if (Date.now() >= deadline) {
        stopped = 'deadline'
        return
      }
      if (reserved >= opts.maxPages || fetches >= maxFetches) return
      const item = queue.shift()
      if (!item) {
        if (inFlight === 0) return // nothing in flight can add more links
        await new Promise((r) => setTimeout(r, 10))
        continue
      }
      reserved++
      fetches++
      inFlight++
      let wasKept = false
      try {
        wasKept = await visit(item)
      } catch (e) {
        failure ??= e
      } finally {
        inFlight--
        if (!wasKept) reserved--
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  if (failure) throw failure
  // Concurrent fetches finish out of order; the stable sort restores breadth-first order.
  return { pages: pages.sort((a, b) => a.depth - b.depth), skipped, kept: keptCount, stopped }
}

/** A queue whose shift is O(1): Array.shift copies, which a queue of thousands of URLs would feel. */
class Fifo<T> {
  private items: (T | undefined)[] = []
  private head = 0
  get length() {
    return this.items.length - this.head
  }
  push(item: T) {
    this.items.push(item)
  }
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined
    const item = this.items[this.head]
    this.items[this.head++] = undefined
    // Drop the consumed prefix now and then, so the array does not grow with every URL ever queued.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
    return item
  }
}

/**
 * One page on its own (the knowledge base's `{url, mode: 'page'}`). Throws ApiError invalid_url for a
 * refused URL or hop, FetchError when the fetch fails, CrawlRefused when robots.txt disallows the page
 * (honoured here too: the service fetches on its own schedule, not as the user's browser) or when the
 * answer is not HTML or plain text.
 */
export async function fetchSinglePage(url: string, opts: FetchPageOptions): Promise<CrawledPage> {
  const ua = opts.userAgent ?? DEFAULT_UA
  const u = assertFetchableUrl(url, opts)
  await resolvePublic(u.hostname, opts)
  const isAllowed = await loadRobots(u.origin, ua, opts)
  if (!isAllowed(u.href)) throw new CrawlRefused('robots_disallowed', 'robots.txt disallows this page.', u.href)
  const { links: _links, ...page } = await fetchPage(u.href, 0, opts, ua)
  return page
}

/** A page the crawler will not take although it was fetched or could be: robots or content type. */
export class CrawlRefused extends Error {
  constructor(
    public readonly reason: 'robots_disallowed' | 'unsupported_type',
    message: string,
    public readonly url: string,
  ) {
    super(message)
    this.name = 'CrawlRefused'
  }
}

/** What a conditional revisit of a page answers: 304, or the page (with its links) as a crawl reads it. */
export type RevisitResult = { status: 'not_modified' } | { status: 'fetched'; page: CrawledPage & { links: string[] } }

/**
 * A page fetched again by a knowledge sync: robots.txt (through `allowed`, loaded once per origin by the
 * caller) and the same guard, caps and extraction as a crawl, with If-None-Match / If-Modified-Since from
 * the last fetch. Throws like fetchSinglePage (FetchError http_status 404 or 410 for a page gone).
 */
export async function revisitPage(
  url: string,
  validators: { etag: string | null; lastModified: string | null },
  opts: FetchPageOptions,
): Promise<RevisitResult> {
  const headers: Record<string, string> = {}
  // Header values come from a stored answer: anything that is not one plain line is not sent back.
  if (validators.etag && isHeaderValue(validators.etag)) headers['if-none-match'] = validators.etag
  if (validators.lastModified && isHeaderValue(validators.lastModified))
    headers['if-modified-since'] = validators.lastModified
  try {
    return { status: 'fetched', page: await fetchPage(url, 0, opts, opts.userAgent ?? DEFAULT_UA, headers) }
  } catch (e) {
    if (e instanceof FetchError && e.reason === 'http_status' && e.status === 304) return { status: 'not_modified' }
    throw e
  }
}

/** A robots.txt predicate for one origin (everything allowed when it is missing or unreachable). */
export function robotsFor(origin: string, opts: FetchPageOptions): Promise<(url: string) => boolean> {
  return loadRobots(origin, opts.userAgent ?? DEFAULT_UA, opts)
}

const isHeaderValue = (v: string) => v.length <= 512 && /^[\x20-\x7e]+$/.test(v)

/** Whether two URLs belong to one site as the crawler counts it ("www." and the bare name are one). */
export function sameSite(a: URL, b: URL): boolean {
  return siteKey(a) === siteKey(b)
}

/** Links the crawler would never fetch as pages (images, archives, scripts...). */
export const notAPage = (u: URL) => NOT_PAGES.test(u.pathname)

async function fetchPage(
  url: string,
  depth: number,
  opts: FetchPageOptions,
  ua: string,
  headers?: Record<string, string>,
): Promise<CrawledPage & { links: string[] }> {
  const res = await safeFetch(url, {
    headers,
    allowPrivateHosts: opts.allowPrivateHosts,
    timeoutMs: opts.timeoutMs,
    // A page is read up to the cap and cut there (not refused): its beginning still has text and links.
    maxBytes: Math.min(opts.maxBytes ?? CRAWL_LIMITS.pageMaxBytes, CRAWL_LIMITS.pageMaxBytes),
    truncate: true,
    resolver: opts.resolver,
    field: opts.field,
    userAgent: ua,
    accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1',
  })
  if (!TEXT_TYPES.has(res.contentType))
    throw new CrawlRefused('unsupported_type', `Content type ${res.contentType || 'unknown'} is not a page.`, res.url)
  let body = decodeBody(res.body, res.contentTypeHeader)
  if (res.contentType !== 'text/plain') body = cutAfterTags(body, CRAWL_LIMITS.pageMaxTags)
  const page = extractPage(body, res.url, res.contentType)
  return {
    url: res.url,
    title: page.title.slice(0, 500),
    text: page.text.slice(0, CRAWL_LIMITS.pageMaxText),
    depth,
    lang: page.lang,
    etag: validator(res.headers.get('etag')),
    lastModified: validator(res.headers.get('last-modified')),
    links: page.links.slice(0, CRAWL_LIMITS.pageMaxLinks),
  }
}

const validator = (v: string | null) => (v && isHeaderValue(v) ? v : null)

/** The HTML up to its `maxTags`-th tag: the extractor's time and memory grow with the elements it parses. */
export function cutAfterTags(html: string, maxTags: number): string {
  let at = -1
  for (let n = 0; n <= maxTags; n++) {
    at = html.indexOf('<', at + 1)
    if (at < 0) return html
  }
  return html.slice(0, at)
}

type RobotsCheck = (url: string) => boolean

/**
 * A site's robots.txt as a predicate. Missing (4xx) or unreachable means everything is allowed, so a
 * site without one, or with a broken one, is still crawlable; its own fetch passes the guard too.
 */
async function loadRobots(origin: string, ua: string, opts: FetchPageOptions): Promise<RobotsCheck> {
  const robotsUrl = `${origin}/robots.txt`
  try {
    const res = await safeFetch(robotsUrl, {
      allowPrivateHosts: opts.allowPrivateHosts,
      timeoutMs: opts.timeoutMs,
      maxBytes: ROBOTS_MAX_BYTES,
      resolver: opts.resolver,
      userAgent: ua,
      accept: 'text/plain,*/*;q=0.1',
    })
    const rules = robotsParser(robotsUrl, decodeBody(res.body, res.contentTypeHeader))
    return (url) => rules.isAllowed(url, ua) !== false
  } catch {
    return () => true
  }
}

function siteKey(u: URL): string {
  return `${u.hostname.replace(/^www\./, '')}:${u.port}`
}

function reasonOf(e: unknown): string {
  if (e instanceof FetchError) return e.reason === 'http_status' ? `http_${e.status}` : e.reason
  if (e instanceof CrawlRefused) return e.reason
  if ((e as { code?: string } | null)?.code === 'invalid_url') return 'invalid_url'
  return 'error'
}
