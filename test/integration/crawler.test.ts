// The crawler against a small site served from this file: breadth-first on one site, robots.txt,
// page and depth caps, clean text, and the URL guard in front of it all.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ApiError } from '~/lib/errors'
import { CrawlRefused, crawlSite, fetchSinglePage, type CrawledPage } from '~/domain/kb/crawler'
import { extractPage } from '~/domain/kb/extract'
import type { Resolver } from '~/domain/kb/url-guard'
import { serveSite, type TestSite } from '../helpers/site'
import { verifies } from '../requirements'

const page = (title: string, body: string, lang = 'en') =>
  `<!doctype html><html lang="${lang}"><head><title>${title}</title></head><body>${body}</body></html>`

// depth 0: /            -> /about, /products, /private/secret (robots), off-host, image, mailto
// depth 1: /about       -> /team, /broken
//          /products    -> /products/widget, /download (binary)
// depth 2: /team (script and style heavy), /products/widget (the fact)
// depth 3: /products/widget/specs -> /products/widget/specs/deep (depth 4)
const SITE: Record<string, { type?: string; status?: number; body: string }> = {
  '/robots.txt': { type: 'text/plain', body: 'User-agent: *\nDisallow: /private/\n' },
  '/': {
    body: page(
      'Acme',
      `<nav><a href="/about">About</a> <a href="/products">Products</a></nav>
    <main><h1>Acme Tools</h1><p>Acme makes tools for careful people.</p>
    <p><a href="/private/secret">staff</a> <a href="https://elsewhere.example/page">partner</a>
    <a href="/logo.png">logo</a> <a href="mailto:info@acme.test">mail</a> <a href="/about#team">about again</a></p></main>`,
    ),
  },
  '/about': {
    body: page('About', '<p>Founded in 1999 in Lyon.</p><a href="/team">Team</a> <a href="/broken">old</a>'),
  },
  '/products': {
    body: page(
      'Products',
      '<p>We sell widgets.</p><a href="/products/widget">Widget</a> <a href="/download">Download</a>',
    ),
  },
  '/team': {
    body: page(
      'Team',
      `<style>.x{color:red} body{margin:0}</style><script>window.secretTracker = "TRACKING_NOISE"</script>
    <noscript>Enable JavaScript NOSCRIPT_NOISE</noscript><header><nav><a href="/">Home</a> MENU_NOISE</nav></header>
    <article><h2>Our team</h2><p>Marie leads    the
    workshop.</p><p>Paul answers the phone.</p></article><footer>FOOTER_NOISE</footer><script>track("MORE_NOISE")</script>`,
    ),
  },
  '/products/widget': {
    body: page(
      'Widget',
      '<h1>Widget</h1><p>The Widget costs 42 euros and weighs 300 grams.</p><a href="/products/widget/specs">Specs</a>',
    ),
  },
  '/products/widget/specs': {
    body: page('Specs', '<p>Made of steel.</p><a href="/products/widget/specs/deep">Deeper</a>'),
  },
  '/products/widget/specs/deep': { body: page('Deep', '<p>Too deep to be crawled.</p>') },
  '/private/secret': { body: page('Secret', '<p>Staff only.</p>') },
  '/download': { type: 'application/octet-stream', body: 'BINARY' },
  '/plain': { type: 'text/plain; charset=utf-8', body: 'Opening hours\n\nMonday to Friday, 9 to 5.' },
}

let site: TestSite
let port: number
let base: string
let requested: string[]

beforeAll(async () => {
  site = await serveSite(SITE)
  requested = site.hits
  base = site.origin
  port = Number(new URL(base).port)
})

afterAll(async () => {
  await site.close()
})

beforeEach(() => {
  requested.length = 0
})

const allowLocal = { allowPrivateHosts: ['127.0.0.1'] }
const paths = (pages: CrawledPage[]) => pages.map((p) => new URL(p.url).pathname)
const pagesRequested = () => requested.filter((p) => p !== '/robots.txt')

describe('crawlSite', () => {
  it('crawls the site breadth-first within depth, honouring robots.txt and staying on the host', async () => {
    verifies('kb.crawler')
    // With onPage the pages are handed over one by one and not kept (the result lists none).
    const pages: CrawledPage[] = []
    const result = await crawlSite(`${base}/`, {
      ...allowLocal,
      maxPages: 50,
      maxDepth: 3,
      concurrency: 1,
      onPage: async (p) => {
        pages.push(p)
      },
    })
    const { skipped } = result
    expect(result.pages).toEqual([])
    expect(result).toMatchObject({ kept: 6, stopped: null })
    expect(paths(pages).sort()).toEqual([
      '/',
      '/about',
      '/products',
      '/products/widget',
      '/products/widget/specs',
      '/team',
    ])
    // Breadth-first: depth never decreases along the crawl (one worker, so completion order is fetch order).
    const depths = pages.map((p) => p.depth)
    expect(depths).toEqual([...depths].sort((a, b) => a - b))
    expect(pages.find((p) => p.url.endsWith('/products/widget'))?.depth).toBe(2)
    expect(requested.filter((p) => p === '/robots.txt')).toHaveLength(1)
    expect(requested).not.toContain('/private/secret')
    expect(requested).not.toContain('/products/widget/specs/deep')
    expect(requested).not.toContain('/logo.png')
    expect(requested.filter((p) => p === '/about')).toHaveLength(1)
    expect(pages.some((p) => p.url.includes('elsewhere'))).toBe(false)
    expect(skipped).toEqual(
      expect.arrayContaining([
        { url: `${base}/private/secret`, reason: 'robots_disallowed' },
        { url: `${base}/broken`, reason: 'http_404' },
        { url: `${base}/download`, reason: 'unsupported_type' },
      ]),
    )
  })

  it('keeps a page two links deep with its facts, and script, style and navigation out of the text', async () => {
    verifies('kb.crawler')
    const { pages } = await crawlSite(`${base}/`, { ...allowLocal, maxPages: 50 })
    const widget = pages.find((p) => p.url === `${base}/products/widget`)!
    expect(widget).toMatchObject({ title: 'Widget', depth: 2, lang: 'en' })
    expect(widget.text).toContain('The Widget costs 42 euros and weighs 300 grams.')
    const team = pages.find((p) => p.url === `${base}/team`)!
    expect(team.text).toContain('Marie leads the workshop.')
    expect(team.text).toContain('Paul answers the phone.')
    expect(team.text).toMatch(/Marie leads the workshop\.\n\nPaul answers the phone\./)
    for (const noise of [
      'TRACKING_NOISE',
      'NOSCRIPT_NOISE',
      'MENU_NOISE',
      'FOOTER_NOISE',
      'MORE_NOISE',
      'color:red',
      'secretTracker',
    ]) {
      expect(team.text).not.toContain(noise)
    }
  })

  it('stops at maxPages and at maxDepth', async () => {
    verifies('kb.crawler')
    const capped = await crawlSite(`${base}/`, { ...allowLocal, maxPages: 3, concurrency: 3 })
    expect(paths(capped.pages).sort()).toEqual(['/', '/about', '/products'])
    expect(pagesRequested().length).toBeLessThanOrEqual(3)

    requested.length = 0
    const shallow = await crawlSite(`${base}/`, { ...allowLocal, maxPages: 50, maxDepth: 1 })
    expect(paths(shallow.pages).sort()).toEqual(['/', '/about', '/products'])
    expect(pagesRequested().sort()).toEqual(['/', '/about', '/products'])

    const single = await crawlSite(`${base}/`, { ...allowLocal, maxPages: 50, maxDepth: 0 })
    expect(paths(single.pages)).toEqual(['/'])
  })

  it('stops when its signal aborts', async () => {
    const controller = new AbortController()
    const run = crawlSite(`${base}/`, {
      ...allowLocal,
      maxPages: 50,
      concurrency: 1,
      signal: controller.signal,
      onPage: async () => controller.abort(new Error('stop')),
    })
    await expect(run).rejects.toThrow('stop')
    expect(pagesRequested()).toEqual(['/'])
  })

  it('refuses a private start URL with invalid_url before any request', async () => {
    verifies('kb.crawler', 'kb.url-safety')
    for (const url of [
      `${base}/`,
      `http://localhost:${port}/`,
      'http://10.0.0.1/',
      'http://169.254.169.254/',
      `http://[::1]:${port}/`,
      'ftp://example.com/',
    ]) {
      const e = await crawlSite(url, { allowPrivateHosts: [], maxPages: 5 }).then(
        () => null,
        (err) => err,
      )
      expect(e, url).toBeInstanceOf(ApiError)
      expect(e.code).toBe('invalid_url')
    }
    expect(requested).toEqual([])
  })

  it('treats www. and the bare host as one site', async () => {
    verifies('kb.crawler')
    const hosts: Resolver = async () => [{ address: '127.0.0.1', family: 4 }]
    SITE['/www'] = {
      body: page('WWW', `<p>Bare host page.</p><a href="http://www.acme.test:${port}/about">About on www</a>`),
    }
    try {
      const { pages } = await crawlSite(`http://acme.test:${port}/www`, {
        allowPrivateHosts: ['acme.test', 'www.acme.test'],
        resolver: hosts,
        maxPages: 2,
        maxDepth: 1,
      })
      expect(pages.map((p) => p.url)).toEqual([`http://acme.test:${port}/www`, `http://www.acme.test:${port}/about`])
    } finally {
      delete SITE['/www']
    }
  })
})

describe('fetchSinglePage', () => {
  it('fetches one page as a CrawledPage, honours robots.txt and the URL guard', async () => {
    verifies('kb.crawler')
    const widget = await fetchSinglePage(`${base}/products/widget`, allowLocal)
    expect(widget).toMatchObject({ url: `${base}/products/widget`, title: 'Widget', depth: 0, lang: 'en' })
    expect(widget.text).toContain('42 euros')
    expect(pagesRequested()).toEqual(['/products/widget'])

    const plain = await fetchSinglePage(`${base}/plain`, allowLocal)
    expect(plain.text).toBe('Opening hours\n\nMonday to Friday, 9 to 5.')

    const refused = await fetchSinglePage(`${base}/private/secret`, allowLocal).then(
      () => null,
      (e) => e,
    )
    expect(refused).toBeInstanceOf(CrawlRefused)
    expect(refused.reason).toBe('robots_disallowed')

    const e = await fetchSinglePage(`${base}/products/widget`, { allowPrivateHosts: [] }).then(
      () => null,
      (err) => err,
    )
    expect(e).toBeInstanceOf(ApiError)
    expect(e.code).toBe('invalid_url')
  })
})

describe('extractPage', () => {
  it('answers absolute, fragment-free, deduplicated http(s) links and the page language', () => {
    const p = extractPage(
      '<html lang="fr-CA"><head><base href="/docs/"></head><body><a href="a">a</a><a href="a#x">again</a><a href="/b?q=1#y">b</a>' +
        '<a href="javascript:void(0)">js</a><a href="ftp://x/y">ftp</a><a href="#top">top</a><a href="https://other.test/">o</a></body></html>',
      'http://site.test/index.html',
    )
    expect(p.links).toEqual(['http://site.test/docs/a', 'http://site.test/b?q=1', 'https://other.test/'])
    expect(p.lang).toBe('fr-CA')
  })

  it('reads pages that leave out <html>, <head> or <body>, as HTML allows', () => {
    for (const html of [
      '<!doctype html><title>Shop</title><p>Open on Sundays.</p><a href="/x">x</a>',
      '<html lang="de"><title>Shop</title><p>Open on Sundays.</p><a href="/x">x</a></html>',
      '<head><title>Shop</title></head><body class="c"><p>Open on Sundays.</p><a href="/x">x</a></body>',
    ]) {
      const p = extractPage(html, 'http://site.test/')
      expect(p.title, html).toBe('Shop')
      expect(p.text, html).toBe('Open on Sundays.\n\nx')
      expect(p.links, html).toEqual(['http://site.test/x'])
    }
    expect(extractPage('<html lang="de"><p>Hallo</p></html>', 'http://site.test/').lang).toBe('de')
  })
})
