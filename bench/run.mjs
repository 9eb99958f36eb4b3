#!/usr/bin/env node
// `npm run bench`: in one run, a bare node:http hello-world and GET /v1/health of the built server
// (embedded PGlite, fresh data dir), each loaded by autocannon after a warm-up; prints req/s, p50, p99
// and the ratio. Loopback only; bounded by time. Servers run in their own processes, pinned to CPU 1
// with taskset when it exists, while autocannon runs here on CPU 0 (perf-baselines.md's set-up).
// Then bench/messages.mjs and bench/conversations.mjs (BENCH_SUITES=core runs only the above).
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { listening, root, startBuiltServer } from './_server.mjs'

const MASTER = 'svc_mk_live_' + 'b'.repeat(48)
const DURATION = Number(process.env.BENCH_SECONDS ?? 10)
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 3)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)

function load(url, duration, headers) {
  return new Promise((res, rej) =>
    autocannon({ url, connections: CONNECTIONS, duration, headers }, (err, r) => (err ? rej(err) : res(r))),
  )
}

async function measure(name, url, headers = {}) {
  await load(url, WARMUP, headers)
  const r = await load(url, DURATION, headers)
  const non2xx = r.non2xx + r.errors
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, requests: r.requests.total, non2xx }
}

const pin = spawnSync('taskset', ['-c', '1', 'true']).status === 0
const run = (args, opts) =>
  pin ? spawn('taskset', ['-c', '1', process.execPath, ...args], opts) : spawn(process.execPath, args, opts)
if (pin) spawnSync('taskset', ['-p', '-c', '0', String(process.pid)], { stdio: 'ignore' })

async function startBare() {
  const src = `const s=require('node:http').createServer((q,r)=>{r.writeHead(200,{'content-type':'application/json'});r.end('{"hello":"world","ok":true}')});s.listen(0,'127.0.0.1',()=>console.log('Listening on http://127.0.0.1:'+s.address().port))`
  const child = run(['-e', src], { stdio: ['ignore', 'pipe', 'inherit'] })
  return { origin: await listening(child), stop: () => child.kill('SIGTERM') }
}

async function startSvc() {
  if (!process.env.BENCH_SKIP_BUILD) {
    const b = spawnSync(process.execPath, [join(root, 'node_modules/nitropack/dist/cli/index.mjs'), 'build'], {
      cwd: root,
      stdio: 'ignore',
    })
    if (b.status !== 0) throw new Error('build failed')
  }
  // The limiter still runs and counts on every metered request; its ceiling is lifted so that the
  // bench measures the route, not 429s.
  return startBuiltServer({
    dataDir: mkdtempSync(join(tmpdir(), 'svc-bench-')),
    env: { SVC_MASTER_KEY: MASTER, SVC_RATE_LIMITS: 'read=1000000000' },
    spawnWith: run,
  })
}

const bare = await startBare()
const svc = await startSvc()
const results = []
try {
  results.push(await measure('bare node:http hello-world', `${bare.origin}/`))
  // A tenant with a personal key: the metered route authenticates (SHA-256 lookup), checks scope and
  // rate class, resolves the account, reads it, and queues an audit row.
  const post = (path, body, key) =>
    fetch(`${svc.origin}/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json())
  const user = await post('/users', { email: `bench-${Date.now()}@example.com` }, MASTER)
  const key = await post(`/users/${user.user_id}/credentials`, { scopes: ['accounts:read'] }, MASTER)
  results.push(
    await measure(
      `GET /v1/health (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}, live db check)`,
      `${svc.origin}/v1/health`,
    ),
  )
  results.push(
    await measure(
      `GET /v1/accounts/{acc} (personal key, metered, audited)`,
      `${svc.origin}/v1/accounts/${user.account_id}`,
      { authorization: `Bearer ${key.secret}` },
    ),
  )
} finally {
  svc.stop()
  bare.stop()
}

console.log(
  `\nautocannon: ${CONNECTIONS} connections${pin ? ', servers on CPU 1, load on CPU 0' : ''}, ${DURATION} s after a ${WARMUP} s warm-up, node ${process.version}, ${new Date().toISOString()}\n`,
)
console.log('| target | req/s | p50 ms | p99 ms | requests | non-2xx/errors |')
console.log('|---|---|---|---|---|---|')
for (const r of results)
  console.log(`| ${r.name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.requests} | ${r.non2xx} |`)
console.log(`\nratio health / bare: ${(results[1].rps / results[0].rps).toFixed(3)}`)
console.log(`ratio GET /v1/accounts/{acc} / bare: ${(results[2].rps / results[0].rps).toFixed(3)}`)

// The chat benches on the same build (each prints its own table): POST …/messages overhead, the
// GET /conversations list over 100,000 (PGlite) or 1,000,000 (PostgreSQL: DATABASE_URL must name an
// EMPTY database) rows, and webhook deliveries per second with 1, 10 and 100 endpoints.
// BENCH_SUITES=core skips them.
const suites = (process.env.BENCH_SUITES ?? 'core,messages,conversations,webhooks').split(',')
for (const suite of ['messages', 'conversations', 'webhooks']) {
  if (!suites.includes(suite)) continue
  console.log(`\n## bench/${suite}.mjs\n`)
  const r = spawnSync(process.execPath, [join(root, 'bench', `${suite}.mjs`)], { stdio: 'inherit', env: process.env })
  if (r.status !== 0) console.log(`bench/${suite}.mjs exited ${r.status}`)
}
process.exit(0)
