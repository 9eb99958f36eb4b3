#!/usr/bin/env node
// `npm run bench:kb-sync` (issue 32 closing note): a 200-page local site crawled into an agent's knowledge,
// then 5 pages' main text changed and the agent synced (POST /agents/{agt}/kb/sync), against a full re-crawl
// of the same site. Twice: with ETags only (every page asked conditionally, 304 for the unchanged), and
// with a sitemap whose lastmod names the changed pages (the unchanged ones not asked at all). Prints, for
// each, the requests the site received, the bytes it sent and the time. The built server on a fresh PGlite
// (or DATABASE_URL); loopback only.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { createServer } from 'node:http'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { root, sleep, startBuiltServer } from './_server.mjs'

const MASTER = 'svc_mk_live_' + 'k'.repeat(48)
const PAGES = 200
const CHANGED = 5

const version = new Map() // page number → edition of its main text
const para = (i, j, v) =>
  `<p>Page ${i}, paragraph ${j}${v ? ` (edition ${v})` : ''}: the orchard grows ${i * 7 + j + (v ?? 0)} varieties of apple, pressed for cider every autumn and sold at the farm stand from nine until five.</p>`
const pagePath = (i) => (i === 0 ? '/' : `/p/${i}`)
function page(i) {
  const v = version.get(i) ?? 0
  // The home page links to every page: the crawler's depth reaches all 200 at once.
  const links =
    i === 0
      ? Array.from({ length: PAGES - 1 }, (_, n) => `<a href="/p/${n + 1}">Page ${n + 1}</a>`).join(' ')
      : '<a href="/">Home</a>'
  return `<!doctype html><html lang="en"><head><title>Page ${i} | Bench Orchard</title></head><body><nav>${links}</nav><main><h1>Page ${i}</h1>${[1, 2, 3, 4].map((j) => para(i, j, v)).join('')}</main><footer>Bench Orchard</footer></body></html>`
}
const lastmod = new Map() // page number → ISO time of its last change (the sitemap's lastmod)
const epoch = new Date(Date.now() - 86_400_000).toISOString()
let useSitemap = false
const stats = { requests: 0, bytes: 0, pages: new Set() }
const reset = () => {
  stats.requests = 0
  stats.bytes = 0
  stats.pages = new Set()
}

const site = await new Promise((r) => {
  const s = createServer((req, res) => {
    stats.requests++
    const send = (status, headers, body) => {
      stats.bytes += Buffer.byteLength(body)
      res.writeHead(status, headers)
      res.end(body)
    }
    const path = (req.url ?? '/').split('?')[0]
    if (path === '/sitemap.xml' && useSitemap) {
      const urls = Array.from(
        { length: PAGES },
        (_, i) => `<url><loc>${origin}${pagePath(i)}</loc><lastmod>${lastmod.get(i) ?? epoch}</lastmod></url>`,
      ).join('')
      return send(200, { 'content-type': 'application/xml' }, `<urlset>${urls}</urlset>`)
    }
    const m = /^\/p\/(\d+)$/.exec(path)
    const i = path === '/' ? 0 : m ? Number(m[1]) : -1
    if (i < 0 || i >= PAGES || path === '/p/0') return send(404, { 'content-type': 'text/plain' }, 'not found')
    stats.pages.add(i)
    const body = page(i)
    const etag = `"${createHash('sha1').update(body).digest('hex').slice(0, 16)}"`
    if (req.headers['if-none-match'] === etag) return send(304, { etag }, '')
    send(200, { 'content-type': 'text/html; charset=utf-8', etag }, body)
  })
  s.listen(0, '127.0.0.1', () =>
    r({
      origin: `http://127.0.0.1:${s.address().port}`,
      close: () => {
        s.closeAllConnections()
        s.close()
      },
    }),
  )
})
const origin = site.origin
// The agent is built from a one-page site of its own, so its knowledge holds only what the bench crawls in.
const home = await new Promise((r) => {
  const s = createServer((req, res) => {
    if (req.url !== '/') {
      res.writeHead(404)
      return res.end()
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(
      '<!doctype html><html><head><title>Bench Home</title></head><body><main><h1>Bench Home</h1><p>A one-page site to build the agent from.</p></main></body></html>',
    )
  })
  s.listen(0, '127.0.0.1', () =>
    r({
      origin: `http://127.0.0.1:${s.address().port}`,
      close: () => {
        s.closeAllConnections()
        s.close()
      },
    }),
  )
})

if (!process.env.BENCH_SKIP_BUILD) {
  const b = spawnSync(process.execPath, [join(root, 'node_modules/nitropack/dist/cli/index.mjs'), 'build'], {
    cwd: root,
    stdio: 'ignore',
  })
  if (b.status !== 0) throw new Error('build failed')
}
const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-kb-sync-'))
const server = await startBuiltServer({
  dataDir,
  env: {
    SVC_MASTER_KEY: MASTER,
    SVC_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
    SVC_RATE_LIMITS: 'read=1000000,write=100000,build=100000',
    SVC_JOB_POLL_SECONDS: process.env.SVC_JOB_POLL_SECONDS ?? '0.5',
  },
})

const call = async (method, path, body, key) => {
  const r = await fetch(`${server.origin}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  return { status: r.status, body: await r.json() }
}

/** A site crawl of all 200 pages: POST {url, mode: site}, done when every page was asked and the site is quiet for 1 s. */
async function fullCrawl(agt, key) {
  reset()
  const t0 = performance.now()
  const r = await call('POST', `/agents/${agt}/kb/documents`, { url: `${origin}/`, mode: 'site' }, key)
  if (r.status !== 202) throw new Error(`crawl: ${r.status} ${JSON.stringify(r.body)}`)
  let last = -1
  let lastAt = performance.now()
  while (stats.pages.size < PAGES || performance.now() - lastAt < 1000) {
    if (stats.requests !== last) {
      last = stats.requests
      lastAt = performance.now()
    }
    if (performance.now() - t0 > 600_000) throw new Error('crawl did not finish in 10 minutes')
    await sleep(25)
  }
  return { requests: stats.requests, bytes: stats.bytes, ms: lastAt - t0 }
}

async function syncOnce(agt, key) {
  reset()
  const t0 = performance.now()
  const r = await call('POST', `/agents/${agt}/kb/sync`, null, key)
  if (r.status !== 202) throw new Error(`sync: ${r.status} ${JSON.stringify(r.body)}`)
  for (;;) {
    const g = (await call('GET', `/agents/${agt}/kb/syncs/${r.body.sync_id}`, null, key)).body
    if (g.status !== 'running') {
      if (g.status !== 'succeeded') throw new Error(`sync ${g.status}: ${g.error}`)
      return { requests: stats.requests, bytes: stats.bytes, ms: performance.now() - t0, sync: g }
    }
    await sleep(25)
  }
}

function change(from) {
  for (let n = 0; n < CHANGED; n++) {
    const i = from + n * 37
    version.set(i, (version.get(i) ?? 0) + 1)
    lastmod.set(i, new Date(Date.now() + 1000).toISOString())
  }
}

const kb = (b) => `${(b / 1024).toFixed(0)} KiB`
const line = (what, m) =>
  `${what.padEnd(44)} ${String(m.requests).padStart(4)} requests  ${kb(m.bytes).padStart(9)}  ${(m.ms / 1000).toFixed(2).padStart(6)} s`

try {
  const user = (
    await call('POST', '/users', { email: `bench-sync-${Date.now()}@example.com`, plan: 'starter' }, MASTER)
  ).body
  const key = (
    await call(
      'POST',
      `/users/${user.user_id}/credentials`,
      { name: 'bench', scopes: ['agents:read', 'agents:write', 'kb:read', 'kb:write'] },
      MASTER,
    )
  ).body.secret
  const voice = (await call('GET', '/voices', null, key)).body.data[0].voice_id
  const build = await call(
    'POST',
    `/accounts/${user.account_id}/agents/build`,
    { website_url: `${home.origin}/`, voice_id: voice, language: 'en' },
    key,
  )
  if (build.status !== 202) throw new Error(`build: ${build.status} ${JSON.stringify(build.body)}`)
  const agt = build.body.agent_id
  for (;;) {
    const b = (await call('GET', `/agents/${agt}/build`, null, key)).body
    if (b.status === 'succeeded') break
    if (b.status === 'failed') throw new Error(`build failed: ${JSON.stringify(b.steps)}`)
    await sleep(200)
  }
  // The summary is not rebuilt by the syncs: the bench measures fetching and re-ingesting.
  await call('PATCH', `/agents/${agt}`, { kb_sync: { reindex: false } }, key)
  const crawl = await fullCrawl(agt, key)
  console.log(
    `kb sync bench (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}): ${PAGES}-page site, ${CHANGED} pages' main text changed before each sync`,
  )
  console.log(line('first crawl (POST kb/documents, mode site)', crawl))

  change(3)
  const etags = await syncOnce(agt, key)
  console.log(line('sync, ETags (304 for the unchanged)', etags))
  const s1 = etags.sync
  console.log(
    `  pages_checked ${s1.pages_checked}, not_modified ${s1.not_modified}, unchanged ${s1.unchanged}, changed ${s1.changed.length}, added ${s1.added.length}, removed ${s1.removed.length}`,
  )

  useSitemap = true
  change(5)
  const lm = await syncOnce(agt, key)
  console.log(line('sync, sitemap lastmod (+ ETags)', lm))
  const s2 = lm.sync
  console.log(
    `  pages_checked ${s2.pages_checked}, not_modified ${s2.not_modified}, unchanged ${s2.unchanged}, changed ${s2.changed.length}, added ${s2.added.length}, removed ${s2.removed.length}`,
  )

  const again = await fullCrawl(agt, key)
  console.log(line('full re-crawl (POST kb/documents, mode site)', again))
} finally {
  await server.stop()
  site.close()
  home.close()
}
