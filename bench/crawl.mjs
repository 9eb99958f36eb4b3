#!/usr/bin/env node
// `npm run bench:crawl`: a whole-site knowledge crawl of a local 30-page site (each page a few
// paragraphs and links to 3 others) through the built server (embedded PGlite, fresh data dir): builds
// an agent from a 1-page site, POSTs {url, mode: 'site'} and polls the document list until the 30 pages
// are stored (or nothing new arrives for 10 s). Prints pages, seconds and pages/s. Loopback only.
import { spawnSync } from 'node:child_process'
import { createServer } from 'node:http'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { root, sleep, startBuiltServer } from './_server.mjs'

const MASTER = 'svc_mk_live_' + 'c'.repeat(48)
const PAGES = 30

const para = (i, j) =>
  `<p>Page ${i}, paragraph ${j}: the orchard grows ${i * 7 + j} varieties of apple, pressed for cider every autumn and sold at the farm stand from nine until five.</p>`
function page(i) {
  // A ternary tree (page i links to 3i+1..3i+3) so the crawler's depth 3 reaches all 30; leaves link
  // back into the site instead.
  const targets =
    3 * i + 1 < PAGES ? [3 * i + 1, 3 * i + 2, 3 * i + 3].map((n) => n % PAGES) : [(i + 1) % PAGES, (i + 2) % PAGES, 0]
  const links = targets.map((n) => `<a href="${n === 0 ? '/' : `/p/${n}`}">Page ${n}</a>`).join(' ')
  return `<!doctype html><html lang="en"><head><title>Page ${i} | Bench Orchard</title></head><body><main><h1>Page ${i}</h1>${[1, 2, 3, 4].map((j) => para(i, j)).join('')}<nav>${links}</nav></main></body></html>`
}

function serve(handler) {
  const s = createServer(handler)
  return new Promise((r) =>
    s.listen(0, '127.0.0.1', () =>
      r({
        origin: `http://127.0.0.1:${s.address().port}`,
        close: () => {
          s.closeAllConnections()
          s.close()
        },
      }),
    ),
  )
}

const site = await serve((req, res) => {
  const m = /^\/p\/(\d+)$/.exec(req.url ?? '') ?? (req.url === '/' ? [null, '0'] : null)
  if (!m || Number(m[1]) >= PAGES || req.url === '/p/0') {
    res.writeHead(404, { 'content-type': 'text/plain' })
    return res.end('not found')
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
  res.end(page(Number(m[1])))
})
const home = await serve((req, res) => {
  if (req.url !== '/') {
    res.writeHead(404)
    return res.end()
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
  res.end(
    '<!doctype html><html><head><title>Bench Home</title></head><body><main><h1>Bench Home</h1><p>A one-page site to build the agent from.</p></main></body></html>',
  )
})

if (!process.env.BENCH_SKIP_BUILD) {
  const b = spawnSync(process.execPath, [join(root, 'node_modules/nitropack/dist/cli/index.mjs'), 'build'], {
    cwd: root,
    stdio: 'ignore',
  })
  if (b.status !== 0) throw new Error('build failed')
}
const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-crawl-'))
const server = await startBuiltServer({
  dataDir,
  env: {
    SVC_MASTER_KEY: MASTER,
    SVC_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
    SVC_RATE_LIMITS: 'read=1000000,write=100000,build=100000',
    SVC_JOB_POLL_SECONDS: process.env.SVC_JOB_POLL_SECONDS ?? '0.5',
  },
})
const origin = server.origin

const call = async (method, path, body, key) => {
  const r = await fetch(`${origin}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  return { status: r.status, body: await r.json() }
}

try {
  const user = (
    await call('POST', '/users', { email: `bench-crawl-${Date.now()}@example.com`, plan: 'starter' }, MASTER)
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

  const started = performance.now()
  const r = await call('POST', `/agents/${agt}/kb/documents`, { url: `${site.origin}/`, mode: 'site' }, key)
  if (r.status !== 202) throw new Error(`crawl: ${r.status} ${JSON.stringify(r.body)}`)
  let pages = 0
  let lastChange = performance.now()
  let finishedAt = started
  while (pages < PAGES && performance.now() - lastChange < 10_000) {
    const l = (await call('GET', `/agents/${agt}/kb/documents?kind=page&limit=100`, null, key)).body
    if (!l.data) throw new Error(`list: ${JSON.stringify(l)}`)
    const n = l.data.filter((d) => d.crawl_id === r.body.crawl_id).length
    if (n !== pages) {
      pages = n
      lastChange = finishedAt = performance.now()
    }
    await sleep(50)
  }
  const seconds = (finishedAt - started) / 1000
  console.log(
    `site crawl (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}): ${pages}/${PAGES} pages in ${seconds.toFixed(2)} s, ${(pages / seconds).toFixed(1)} pages/s (from POST to the last page listed; 50 ms poll)`,
  )
} finally {
  await server.stop()
  site.close()
  home.close()
}
