// A small website served by the test itself on 127.0.0.1, for builds and crawls.
import { createServer, type Server } from 'node:http'

export interface Page {
  status?: number
  body?: string
  type?: string
  location?: string
  delayMs?: number
}

export interface TestSite {
  origin: string
  hits: string[]
  close(): Promise<void>
}

export async function serveSite(pages: Record<string, Page>): Promise<TestSite> {
  const hits: string[] = []
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    hits.push(path)
    const page = pages[path]
    const send = () => {
      if (!page) {
        res.writeHead(404, { 'content-type': 'text/plain' })
        return res.end('not found')
      }
      res.writeHead(page.status ?? (page.location ? 302 : 200), {
        'content-type': page.type ?? 'text/html; charset=utf-8',
        ...(page.location ? { location: page.location } : {}),
      })
      res.end(page.body ?? '')
    }
    if (page?.delayMs) setTimeout(send, page.delayMs)
    else send()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as { port: number }
  return {
    origin: `http://127.0.0.1:${port}`,
    hits,
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
