// A site's sitemap for the knowledge sync (decisions "Knowledge sync"): each page's <lastmod>, so a page
// not modified since the last fetch is not requested at all, and its URLs, which the sync may add.
//
// Hostile input (decisions "Security rules"): the sitemap is fetched through safeFetch (guard, time, size)
// and read with indexOf scans, never a regular expression over the document; entries and child sitemaps
// are capped.
import { decodeBody } from './extract'
import { safeFetch } from './safe-fetch'
import type { Resolver } from './url-guard'

export const SITEMAP_LIMITS = {
  maxBytes: 5 * 1024 * 1024,
  maxEntries: 50_000,
  /** Child sitemaps read from a sitemap index (one level only). */
  maxChildren: 5,
  timeoutMs: 10_000,
} as const

export interface SitemapEntry {
  url: string
  /** Milliseconds; a date without a time counts as the end of that day (it says only the day). */
  lastmod: number | null
}

export interface SitemapOptions {
  allowPrivateHosts: readonly string[]
  userAgent?: string
  resolver?: Resolver
  timeoutMs?: number
}

/** `<origin>/sitemap.xml` and, when it is an index, up to maxChildren of its same-origin sitemaps. Never throws: a missing or broken sitemap is no sitemap. */
export async function loadSitemap(origin: string, opts: SitemapOptions): Promise<SitemapEntry[]> {
  const first = await fetchXml(`${origin}/sitemap.xml`, opts)
  if (!first) return []
  const entries = readEntries(first, 'url', origin)
  const children = readEntries(first, 'sitemap', origin).slice(0, SITEMAP_LIMITS.maxChildren)
  for (const child of children) {
    if (entries.length >= SITEMAP_LIMITS.maxEntries) break
    const xml = await fetchXml(child.url, opts)
    if (xml) entries.push(...readEntries(xml, 'url', origin).slice(0, SITEMAP_LIMITS.maxEntries - entries.length))
  }
  return entries.slice(0, SITEMAP_LIMITS.maxEntries)
}

async function fetchXml(url: string, opts: SitemapOptions): Promise<string | null> {
  try {
    const res = await safeFetch(url, {
      allowPrivateHosts: opts.allowPrivateHosts,
      timeoutMs: opts.timeoutMs ?? SITEMAP_LIMITS.timeoutMs,
      maxBytes: SITEMAP_LIMITS.maxBytes,
      // A cut sitemap still lists its first pages; the entry cut at the end is dropped by the scan.
      truncate: true,
      resolver: opts.resolver,
      userAgent: opts.userAgent,
      accept: 'application/xml,text/xml;q=0.9,*/*;q=0.1',
    })
    return decodeBody(res.body, res.contentTypeHeader)
  } catch {
    return null
  }
}

/**
 * The <loc> and <lastmod> of each <tag> element (url or sitemap) whose location is on `origin`. A linear
 * scan: each element is looked for once from where the previous one ended.
 */
export function readEntries(xml: string, tag: 'url' | 'sitemap', origin: string): SitemapEntry[] {
  const out: SitemapEntry[] = []
  const open = `<${tag}>`
  const close = `</${tag}>`
  let at = 0
  while (out.length < SITEMAP_LIMITS.maxEntries) {
    const start = xml.indexOf(open, at)
    if (start < 0) break
    const end = xml.indexOf(close, start + open.length)
    if (end < 0) break
    at = end + close.length
    const body = xml.slice(start + open.length, end)
    const loc = textOf(body, 'loc')
    if (!loc || loc.length > 2048) continue
    let url: URL
    try {
      url = new URL(loc)
    } catch {
      continue
    }
    // Only the site's own pages: a sitemap naming another host is not followed (the crawl's site rule).
    if (url.origin !== origin) continue
    url.hash = ''
    out.push({ url: url.href, lastmod: parseLastmod(textOf(body, 'lastmod')) })
  }
  return out
}

function textOf(body: string, tag: string): string | null {
  const open = body.indexOf(`<${tag}>`)
  if (open < 0) return null
  const from = open + tag.length + 2
  const close = body.indexOf(`</${tag}>`, from)
  if (close < 0) return null
  let text = body.slice(from, close).trim()
  if (text.startsWith('<![CDATA[') && text.endsWith(']]>')) text = text.slice(9, -3).trim()
  return text
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&apos;', "'")
    .replaceAll('&amp;', '&')
}

const DAY_MS = 86_400_000

/** W3C datetime: a full timestamp as given; a date alone (YYYY, YYYY-MM, YYYY-MM-DD) as the end of that period's last day. */
export function parseLastmod(raw: string | null): number | null {
  if (!raw || raw.length > 40) return null
  const ms = Date.parse(raw)
  if (!Number.isFinite(ms)) return null
  if (raw.length === 10) return ms + DAY_MS
  if (raw.length === 7) {
    const d = new Date(ms)
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
  }
  if (raw.length === 4) return Date.UTC(new Date(ms).getUTCFullYear() + 1, 0, 1)
  return ms
}
