// The knowledge base's crawler: breadth-first over one site, robots.txt honoured, every fetch through
// safeFetch (so every hop is address-checked and capped), HTML and plain text turned into clean text.
//
// Same site means the same host name, where "www." and the bare name count as one (sites commonly
// serve one and redirect from the other), on the same port, over http or https. If the start page
// itself redirects to another host, that host joins the site: the owner's redirect names where the
// site lives. Anything else off-site is ignored without fetching it.
import robotsParser from 'robots-parser'
import { decodeBody, extractPage } from './extract'
import { FetchError, safeFetch } from './safe-fetch'
import { assertFetchableUrl, resolvePublic, type Resolver } from './url-guard'

export interface CrawledPage {
  url: string
  title: string
  text: string
  depth: number
  lang: string | null
}

export interface SkippedPage { url: string; reason: string }

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
  /** Called once per kept page as it completes; a throw stops the crawl and rejects crawlSite. */
  onPage?: (page: CrawledPage) => Promise<void>
  /** Stops the crawl between pages (a deleted agent, a shutting-down worker); crawlSite rejects with its reason. */
  signal?: AbortSignal
}

export interface CrawlResult { pages: CrawledPage[]; skipped: SkippedPage[] }

const DEFAULT_UA = 'SvcCrawler/1.0'
const TEXT_TYPES = new Set(['text/html', 'application/xhtml+xml', 'text/plain'])
// Links that are obviously not pages are not worth a request.
const NOT_PAGES = /\.(?:png|jpe?g|gif|webp|svg|ico|bmp|tiff?|pdf|zip|gz|tgz|rar|7z|exe|dmg|msi|mp[34]|m4a|wav|ogg|webm|avi|mov|woff2?|ttf|eot|css|js|json|xml|rss|atom|docx?|xlsx?|pptx?)$/i
const ROBOTS_MAX_BYTES = 512 * 1024
// Failed fetches cost requests too; this bounds the total work on a site that is mostly errors.
const MAX_FETCHES_PER_PAGE = 3
// A big broken site could otherwise fill memory with skip reasons.
const MAX_SKIPPED = 500

/** Crawls `startUrl`'s site; an unacceptable start URL throws ApiError invalid_url before any request. */
export async function crawlSite(startUrl: string, opts: CrawlOptions): Promise<CrawlResult> {
  const ua = opts.userAgent ?? DEFAULT_UA
  const maxDepth = opts.maxDepth ?? 3
  const concurrency = Math.max(1, opts.concurrency ?? 2)
  const start = assertFetchableUrl(startUrl, opts)
  await resolvePublic(start.hostname, opts)
  start.hash = ''

  const sites = new Set([siteKey(start)])
  const robots = new Map<string, Promise<RobotsCheck>>()
  const seen = new Set<string>([start.href])
  const queue: { url: string; depth: number }[] = [{ url: start.href, depth: 0 }]
  const pages: CrawledPage[] = []
  const skipped: SkippedPage[] = []
  const skip = (url: string, reason: string): false => {
    if (skipped.length < MAX_SKIPPED) skipped.push({ url, reason })
    return false
  }
  let reserved = 0 // pages kept plus fetches in flight: keeps concurrency from overshooting maxPages
  let fetches = 0
  let inFlight = 0
  let failure: unknown = null

  const allowedByRobots = (url: URL) => {
    let check = robots.get(url.origin)
    if (!check) robots.set(url.origin, (check = loadRobots(url.origin, ua, opts)))
    return check.then((isAllowed) => isAllowed(url.href))
  }

  const kept = new Set<string>()
  /** Whether the page was kept. */
  const visit = async (item: { url: string; depth: number }): Promise<boolean> => {
    const url = new URL(item.url)
    if (!(await allowedByRobots(url))) return skip(item.url, 'robots_disallowed')
    let page: CrawledPage & { links: string[] }
    try {
      page = await fetchPage(item.url, item.depth, opts, ua)
    } catch (e) {
      // The start page failing is the crawl failing: there is no site to report on.
      if (item.depth === 0) throw e
      return skip(item.url, reasonOf(e))
    }
    const final = new URL(page.url)
    if (item.depth === 0) sites.add(siteKey(final))
    else if (!sites.has(siteKey(final))) return skip(item.url, 'off_site_redirect')
    // Two links redirecting to one page keep it once.
    if (kept.has(final.href) || pages.length >= opts.maxPages) return false
    kept.add(final.href)
    seen.add(final.href)
    const { links, ...result } = page
    pages.push(result)
    if (opts.onPage) await opts.onPage(result)
    if (item.depth >= maxDepth) return true
    for (const link of links) {
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
      if (reserved >= opts.maxPages || fetches >= opts.maxPages * MAX_FETCHES_PER_PAGE) return
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
  return { pages: pages.sort((a, b) => a.depth - b.depth), skipped }
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
  constructor(public readonly reason: 'robots_disallowed' | 'unsupported_type', message: string, public readonly url: string) {
    super(message)
    this.name = 'CrawlRefused'
  }
}

async function fetchPage(url: string, depth: number, opts: FetchPageOptions, ua: string): Promise<CrawledPage & { links: string[] }> {
  const res = await safeFetch(url, {
    allowPrivateHosts: opts.allowPrivateHosts,
    timeoutMs: opts.timeoutMs,
    maxBytes: opts.maxBytes,
    resolver: opts.resolver,
    field: opts.field,
    userAgent: ua,
    accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1',
  })
  if (!TEXT_TYPES.has(res.contentType)) throw new CrawlRefused('unsupported_type', `Content type ${res.contentType || 'unknown'} is not a page.`, res.url)
  const page = extractPage(decodeBody(res.body, res.contentTypeHeader), res.url, res.contentType)
  return { url: res.url, title: page.title, text: page.text, depth, lang: page.lang, links: page.links }
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
