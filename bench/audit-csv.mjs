#!/usr/bin/env node
// Memory of the audit CSV export: does GET /v1/audit?format=csv stay flat while streaming 50,000 rows?
//
// Run `npx nitropack build` first; this script builds nothing. It starts .output/server/index.mjs on a
// fresh data dir and seeds the audit log in one of two ways:
//   - default (embedded PGlite): only the server process can open PGlite, so the rows come from real
//     metered requests, BENCH_ROWS of them sent BENCH_CONCURRENCY at a time (GET /v1/users?limit=abc, a
//     400 answered before any query, with a user agent holding a comma and a double quote);
//   - DATABASE_URL set (a fresh, empty PostgreSQL database): one INSERT … SELECT generate_series through
//     the `postgres` package, which is much faster.
// Then it samples the server's VmRSS (/proc/<pid>/status) before, every 50 ms during, and after one
// download of the whole window, reading the body as a stream (the client never holds the file), and
// prints rows, bytes, seconds and RSS before/peak/after (BENCH_DOWNLOADS=n repeats the download on the same
// server). Figures only, no asserts.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { entry, sleep, startBuiltServer } from './_server.mjs'

const ROWS = Number(process.env.BENCH_ROWS ?? 50_000)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64)
const DOWNLOADS = Number(process.env.BENCH_DOWNLOADS ?? 1)
const databaseUrl = process.env.DATABASE_URL

if (!existsSync(entry)) {
  console.error(`${entry} is missing: run \`npx nitropack build\` first.`)
  process.exit(1)
}

const mb = (kb) => (kb / 1024).toFixed(1)

function rssKb(pid) {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) : NaN
}

async function start() {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-audit-'))
  const masterKey = 'svc_mk_live_' + randomBytes(36).toString('base64url')
  const server = await startBuiltServer({
    dataDir,
    env: {
      SVC_MASTER_KEY: masterKey,
      SVC_SECRET: randomBytes(32).toString('base64url'),
      SVC_RATE_LIMITS: 'read=1000000,write=1000000',
    },
  })
  const stop = async () => {
    await server.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
  return { origin: server.origin, masterKey, pid: server.pid, stop }
}

async function seedOverHttp(origin, masterKey) {
  const headers = { authorization: `Bearer ${masterKey}`, 'user-agent': 'bench "audit", csv/1.0' }
  let next = 0
  let failed = 0
  const worker = async () => {
    while (next < ROWS) {
      next++
      const r = await fetch(`${origin}/v1/users?limit=abc`, { headers })
      await r.arrayBuffer()
      if (r.status !== 400) failed++
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  if (failed) console.warn(`${failed} seeding requests did not answer 400`)
  // The audit writer flushes every 250 ms; leave it time to drain its buffer.
  await sleep(2000)
}

async function seedOverSql() {
  const { default: postgres } = await import('postgres')
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  try {
    await sql`
      INSERT INTO audit_log (request_id, credential_type, credential_id, account_ids, cross_account, method, path, status_code,
                             error_code, ip, user_agent, duration_ms, created_at)
      SELECT 'req_bench_' || g, 'master', 'master', jsonb_build_array('acc_' || (g % 97)), true, 'GET', '/v1/users/usr_' || g,
             CASE WHEN g % 10 = 0 THEN 404 ELSE 200 END, CASE WHEN g % 10 = 0 THEN 'not_found' END,
             '198.51.100.' || (g % 250), 'bench "audit", csv/1.0', g % 50, now() - g * interval '5 ms'
      FROM generate_series(1, ${ROWS}) g`
  } finally {
    await sql.end()
  }
}

const server = await start()
try {
  const seedStart = Date.now()
  if (databaseUrl) await seedOverSql()
  else await seedOverHttp(server.origin, server.masterKey)
  const seedSeconds = (Date.now() - seedStart) / 1000
  await sleep(500)

  const from = new Date(seedStart - 3600_000).toISOString()
  const to = new Date(Date.now() + 60_000).toISOString()
  const url = `${server.origin}/v1/audit?format=csv&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`

  console.log(`engine            ${databaseUrl ? 'postgres (seeded by SQL)' : 'pglite (seeded by HTTP)'}`)
  console.log(`seeded            ${ROWS} rows in ${seedSeconds.toFixed(1)} s`)
  // More than one download shows whether growth is a high-water mark (reused) or retained (adds up).
  for (let n = 1; n <= DOWNLOADS; n++) {
    const before = rssKb(server.pid)
    let peak = before
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssKb(server.pid))
    }, 50)
    const t0 = performance.now()
    const res = await fetch(url, { headers: { authorization: `Bearer ${server.masterKey}` } })
    let bytes = 0
    let newlines = 0
    for await (const chunk of res.body) {
      bytes += chunk.length
      for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) newlines++
    }
    const seconds = (performance.now() - t0) / 1000
    clearInterval(sampler)
    peak = Math.max(peak, rssKb(server.pid))
    await sleep(500)
    const after = rssKb(server.pid)
    const rows = Math.max(0, newlines - 1)
    if (DOWNLOADS > 1) console.log(`-- download ${n} of ${DOWNLOADS}`)
    console.log(
      `status            ${res.status} ${res.headers.get('content-type')}; ${res.headers.get('content-disposition')}`,
    )
    console.log(`rows received     ${rows} (header excluded)`)
    console.log(`bytes             ${bytes} (${(bytes / 1048576).toFixed(1)} MB)`)
    console.log(`seconds           ${seconds.toFixed(2)} (${Math.round(rows / seconds)} rows/s)`)
    console.log(`server RSS (MB)   before ${mb(before)}, peak ${mb(peak)} (+${mb(peak - before)}), after ${mb(after)}`)
  }
} finally {
  await server.stop()
}
