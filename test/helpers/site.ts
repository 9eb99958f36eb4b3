// A small website served by the test itself on 127.0.0.1, for builds and crawls.
import { createHash } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'

export interface Page {
  status?: number
  body?: string
  type?: string
  location?: string
  delayMs?: number
  /** Sent as Last-Modified; a request whose If-Modified-Since equals it is answered 304 (with `validators`). */
  lastModified?: string
}

export interface TestSite {
  origin: string
  hits: string[]
  /** Every request with its headers (conditional requests show here). */
  requests: { path: string; headers: IncomingHttpHeaders }[]
  /** Response body bytes sent, 304s and 404s included. */
  bytes: number
  close(): Promise<void>
}

/** The ETag a page is served with under `validators`: a hash of its body. */
export const etagOf = (body: string) => `"${createHash('sha1').update(body).digest('hex').slice(0, 16)}"`

/**
 * Serves `pages` (looked up on every request, so a test may change, add or delete pages while it runs).
 * With `validators`, 200 answers carry an ETag (a hash of the body) and the page's Last-Modified, and a
 * request whose If-None-Match or If-Modified-Since still matches is answered 304 with no body, as real
 * servers do.
 */
export async function serveSite(pages: Record<string, Page>, opts: { validators?: boolean } = {}): Promise<TestSite> {
  const hits: string[] = []
  const requests: TestSite['requests'] = []
  let bytes = 0
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    hits.push(path)
    requests.push({ path, headers: req.headers })
    const page = pages[path]
    const end = (body: string) => {
      bytes += Buffer.byteLength(body)
      res.end(body)
    }
    const send = () => {
      if (!page) {
        res.writeHead(404, { 'content-type': 'text/plain' })
        return end('not found')
      }
      const status = page.status ?? (page.location ? 302 : 200)
      const body = page.body ?? ''
      const validators: Record<string, string> =
        opts.validators && status === 200
          ? { etag: etagOf(body), ...(page.lastModified ? { 'last-modified': page.lastModified } : {}) }
          : {}
      const inm = req.headers['if-none-match']
      const ims = req.headers['if-modified-since']
      if (
        validators.etag &&
        (inm ? inm === validators.etag : !!ims && !!page.lastModified && ims === page.lastModified)
      ) {
        res.writeHead(304, validators)
        return end('')
      }
      res.writeHead(status, {
        'content-type': page.type ?? 'text/html; charset=utf-8',
        ...(page.location ? { location: page.location } : {}),
        ...validators,
      })
      end(body)
    }
    if (page?.delayMs) setTimeout(send, page.delayMs)
    else send()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as { port: number }
  return {
    origin: `http://127.0.0.1:${port}`,
    hits,
    requests,
    get bytes() {
      return bytes
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}

export const html = (title: string, body: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body><nav><a href="/">Home</a></nav><main>${body}</main><footer>© Footer text</footer></body></html>`

/**
 * A bakery's two-page site (home and prices), the knowledge the widget and voice tests ask about: a
 * sourdough loaf costs $9, a dozen croissants $30.
 */
export const serveBakery = (name: string, town: string) =>
  serveSite({
    '/': {
      body: html(
        `${name} | Home`,
        `<h1>${name}</h1><p>${name} bakes sourdough in ${town}.</p><a href="/prices">Prices</a>`,
      ),
    },
    '/prices': {
      body: html(`Prices | ${name}`, '<p>A sourdough loaf costs $9.</p><p>A dozen croissants cost $30.</p>'),
    },
  })
