// The crawl limits of decisions "Limits on hostile work", on servers of their own: a site of 5 MB pages
// and about 300,000 links crawls within a fixed memory bound (the server child's RSS is read from
// /proc while the crawl runs), each page keeps at most 200,000 characters of text and the agent at most
// the plan's pages; a slow site stops at the whole-crawl deadline with the pages so far.
//
// Both servers run on a database of this file's own (on PostgreSQL, one created for the file): on the run's
// shared PostgreSQL another test server could run the crawl job, and the job must run in the process being
// measured.
import { readFileSync } from 'node:fs'
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createApi, type Api } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { ownDatabase, type OwnDatabase } from '../helpers/own-database'
import { startServer, type TestServer } from '../helpers/server'
import { html, serveSite } from '../helpers/site'
import { createTenant } from '../helpers/tenant'
import { sleep, until } from '../helpers/wait'
import { verifies } from '../requirements'

const PAGE_BYTES = 5_000_000 // under the old 5 MiB fetch cap, so such a page used to be read and parsed whole
const HOME_LINKS = 200_000
// Child pages: long paragraphs, each with two links, so 5 MB holds about 2,600 more links per page.
const PARAGRAPH_TEXT = 'Kites have been flown for centuries and come in many shapes and sizes. '.repeat(55)

const servers: TestServer[] = []
const sites: { close(): Promise<void> }[] = []
let own: OwnDatabase
beforeAll(async () => {
  own = await ownDatabase('crawl_limits')
})
afterAll(() => own?.drop())
// Each test's server and sites go when it ends, pass or fail: a server left parsing would starve the next.
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop('SIGKILL')
  for (const s of sites.splice(0)) await s.close()
})

const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : NaN
}

/** Writes `next()` chunks until `bytes` are sent or the client hangs up, waiting for the socket to drain. */
function stream(res: ServerResponse, bytes: number, head: string, next: (i: number) => string, tail: string) {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
  let sent = 0
  let i = 0
  let closed = false
  res.on('close', () => {
    closed = true
  })
  const pump = () => {
    if (sent === 0) {
      res.write(head)
      sent += head.length
    }
    while (!closed && sent < bytes - tail.length) {
      const chunk = next(i++)
      sent += chunk.length
      if (!res.write(chunk)) return void res.once('drain', pump)
    }
    if (!closed) res.end(tail)
  }
  pump()
}

/** The hostile site: / holds 200,000 links in 5 MB; every /p/N page is 5 MB of long paragraphs with links. */
async function serveHugeSite(): Promise<{ origin: string; hits: () => number; close(): Promise<void> }> {
  let hits = 0
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    if (path === '/robots.txt') return void res.writeHead(404).end()
    hits++
    if (path === '/') {
      // 1,000 links per chunk, generated as the socket asks for more: never the whole page in memory.
      return stream(
        res,
        PAGE_BYTES,
        '<!doctype html><html lang="en"><head><title>Link Farm</title></head><body><main><p>Index of kite facts.</p>',
        (c) => {
          if (c * 1000 >= HOME_LINKS) return ' '.repeat(64 * 1024)
          let s = ''
          for (let k = c * 1000; k < (c + 1) * 1000; k++) s += `<a href="/p/${k}">x</a>`
          return s
        },
        '</main></body></html>',
      )
    }
    const n = Number(path.slice(3)) || 0
    return stream(
      res,
      PAGE_BYTES,
      `<!doctype html><html lang="en"><head><title>Kite page ${n}</title></head><body><article><h1>Kite page ${n}</h1>`,
      (i) =>
        `<p>${PARAGRAPH_TEXT} <a href="/p/${HOME_LINKS + n * 5000 + 2 * i}">more</a> <a href="/p/${HOME_LINKS + n * 5000 + 2 * i + 1}">other</a></p>`,
      '</article></body></html>',
    )
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    hits: () => hits,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}

async function pagesOf(api: Api, agentId: string) {
  const r = await api.get(`/agents/${agentId}/kb/documents?kind=page&limit=100`)
  expect(r.status).toBe(200)
  return r.body.data as { url: string; chars: number; status: string; crawl_id: string | null }[]
}

/** Waits for this crawl to show as running on the server, then for the agent to read idle again. */
async function waitForCrawl(api: Api, agentId: string, crawlId: string, timeoutMs: number, onTick?: () => void) {
  // A poll that fails (a connection reset on a loaded machine) or hangs (a server frozen in a parse) is one
  // more poll: onTick keeps sampling, and a dead server times out.
  const crawl = async () => {
    onTick?.()
    const r = await Promise.race([
      api.get(`/agents/${agentId}/kb/status`).catch(() => null),
      sleep(1000).then(() => null),
    ])
    return r?.body?.crawl
  }
  await until('the crawl to start', async () => (await crawl())?.crawl_id === crawlId, 30_000, 100)
  await until('the crawl to finish', async () => (await crawl())?.status === 'idle', timeoutMs, 100)
}

describe('crawl memory bound', () => {
  it('a site of 5 MB pages and 300,000 links crawls within a fixed memory bound and the per-page caps', async () => {
    verifies('kb.crawl.memory-bound')
    // A 60 s deadline keeps the test's length bounded on a loaded machine; unloaded, the 49 pages take 20–30 s.
    const server = await startServer({ env: { ...own.env, SVC_CRAWL_DEADLINE_SECONDS: '60' } })
    servers.push(server)
    const master = createApi(server.base, server.masterKey)
    const t = await createTenant(master, { plan: 'trial' })
    const home = await serveSite({ '/': { body: html('Kite Club', '<p>The Kite Club meets on Sundays.</p>') } })
    sites.push(home)
    const agentId = await buildAgent(t.api, t.accountId, `${home.origin}/`)
    const huge = await serveHugeSite()
    sites.push(huge)

    const pid = server.child.pid!
    await sleep(1000)
    const baseline = rssMb(pid)
    // Measured growth is 148–216 MB on a 2-core machine (V8 collects lazily, so the figure moves by tens of MB
    // between runs; the same at acbb291 and after it, so not a leak of later work); a 200 MB bound failed one run
    // in three. Before the limits, parsing the first 5 MB page alone took 120 s and 1.7 GB (measured on its own).
    const BOUND_MB = 300
    let peak = baseline
    // Fails as soon as the bound is crossed, rather than after a crawl that may take minutes to blow up.
    const sample = () => {
      peak = Math.max(peak, rssMb(pid))
      if (peak - baseline >= BOUND_MB)
        throw new Error(
          `the server's RSS grew by ${(peak - baseline).toFixed(0)} MB (baseline ${baseline.toFixed(0)} MB)`,
        )
    }
    const timer = setInterval(() => {
      try {
        sample()
      } catch {
        /* reported by the next poll */
      }
    }, 50)
    const started = Date.now()
    try {
      const r = await t.api.post(`/agents/${agentId}/kb/documents`, { url: `${huge.origin}/`, mode: 'site' })
      expect(r.status).toBe(202)
      await waitForCrawl(t.api, agentId, r.body.crawl_id, 120_000, sample)
    } finally {
      clearInterval(timer)
    }
    sample()
    const seconds = (Date.now() - started) / 1000
    const pages = await pagesOf(t.api, agentId)
    const crawled = pages.filter((p) => p.url.startsWith(huge.origin))
    console.log(
      `[crawl-limits] ${crawled.length} pages of 5 MB in ${seconds.toFixed(1)} s, ${huge.hits()} requests; server RSS baseline ${baseline.toFixed(0)} MB, peak ${peak.toFixed(0)} MB, growth ${(peak - baseline).toFixed(0)} MB`,
    )
    // The trial plan's 50 pages per agent, the build's page included.
    expect(pages.length).toBeLessThanOrEqual(50)
    expect(crawled.length).toBeGreaterThanOrEqual(5)
    expect(huge.hits()).toBeLessThanOrEqual(3 * 50)
    for (const p of crawled) expect(p.chars).toBeLessThanOrEqual(200_000)
    // The long pages really were cut at the cap, not short to begin with.
    expect(crawled.some((p) => p.chars === 200_000)).toBe(true)
    expect(peak - baseline).toBeLessThan(BOUND_MB)
  }, 300_000)
})

describe('crawl deadline', () => {
  it('a slow site stops at the whole-crawl deadline with the pages so far', async () => {
    verifies('kb.crawl.deadline')
    const server = await startServer({ env: { ...own.env, SVC_CRAWL_DEADLINE_SECONDS: '3' } })
    servers.push(server)
    const master = createApi(server.base, server.masterKey)
    const t = await createTenant(master, { plan: 'trial' })
    const home = await serveSite({ '/': { body: html('Kite Club', '<p>The Kite Club meets on Sundays.</p>') } })
    sites.push(home)
    const agentId = await buildAgent(t.api, t.accountId, `${home.origin}/`)
    // 40 pages a second apart: the whole crawl would take 20 s with two workers.
    const slowPages: Record<string, { body: string; delayMs?: number }> = {
      '/': {
        body: html(
          'Slow Kites',
          `<p>Slow kite index.</p>${Array.from({ length: 40 }, (_, i) => `<a href="/s/${i}">${i}</a>`).join(' ')}`,
        ),
      },
    }
    for (let i = 0; i < 40; i++)
      slowPages[`/s/${i}`] = { delayMs: 1000, body: html(`Slow ${i}`, `<p>Slow kite fact number ${i}.</p>`) }
    const slow = await serveSite(slowPages)
    sites.push(slow)

    const started = Date.now()
    const r = await t.api.post(`/agents/${agentId}/kb/documents`, { url: `${slow.origin}/`, mode: 'site' })
    expect(r.status).toBe(202)
    await waitForCrawl(t.api, agentId, r.body.crawl_id, 60_000)
    const seconds = (Date.now() - started) / 1000
    const crawled = (await pagesOf(t.api, agentId)).filter((p) => p.url.startsWith(slow.origin))
    console.log(`[crawl-limits] deadline 3 s: ${crawled.length} pages, crawl ended after ${seconds.toFixed(1)} s`)
    // The pages fetched before the deadline are kept; the rest of the site is not crawled.
    expect(crawled.length).toBeGreaterThanOrEqual(2)
    expect(crawled.length).toBeLessThan(15)
    expect(crawled.every((p) => p.status === 'indexed' && p.crawl_id === r.body.crawl_id)).toBe(true)
    expect(seconds).toBeLessThan(12)
  }, 240_000)
})
