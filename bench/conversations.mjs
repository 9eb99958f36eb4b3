#!/usr/bin/env node
// GET /v1/conversations under load: req/s and p99 of the 50-row first page (default sort and two filtered
// queries), EXPLAIN (ANALYZE) plans on PostgreSQL, and the page JSON built by PostgreSQL (json_build_object,
// the route's default) against rows mapped in JavaScript (SVC_BENCH_LIST_JSON=js, a bench-only switch).
//
// Run `npx nitropack build` first; this script builds nothing.
//   - DATABASE_URL set (an EMPTY PostgreSQL database): the server migrates it, a tenant and key are made
//     over HTTP, then BENCH_ROWS (default 1,000,000) conversations are seeded by one INSERT … SELECT
//     generate_series through the `postgres` package.
//   - otherwise (embedded PGlite): the server runs once on a fresh data dir to create the schema, the
//     tenant and the key, then stops; the bench opens that PGlite directory itself, seeds BENCH_ROWS
//     (default 100,000) by SQL, closes it, and starts the server again.
// Rows span 90 days over 3 agents, 4 channels, 5 outcomes and 4 languages. Figures only, no asserts.
// BENCH_SECONDS (default 10) per measurement after BENCH_WARMUP_SECONDS (default 2), BENCH_CONNECTIONS (default 10).
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { entry, startBuiltServer } from './_server.mjs'
import { execSql, SEEDED_AGENTS, seedConversationsSql } from './_fixtures.mjs'

const databaseUrl = process.env.DATABASE_URL
const ROWS = Number(process.env.BENCH_ROWS ?? (databaseUrl ? 1_000_000 : 100_000))
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 2)
const AGENTS = SEEDED_AGENTS

if (!existsSync(entry)) {
  console.error(`${entry} is missing: run \`npx nitropack build\` first.`)
  process.exit(1)
}

const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-conv-'))
const masterKey = 'svc_mk_live_' + randomBytes(36).toString('base64url')
const secret = randomBytes(32).toString('base64url')

async function start(extraEnv = {}) {
  return startBuiltServer({
    dataDir,
    env: {
      SVC_MASTER_KEY: masterKey,
      SVC_SECRET: secret,
      SVC_RATE_LIMITS: 'read=100000000,write=1000000,backfill=1000000',
      ...extraEnv,
    },
  })
}

async function tenant(origin) {
  const h = { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' }
  const user = await (
    await fetch(`${origin}/v1/users`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({
        email: `bench-${Date.now()}@example.com`,
        password: 'bench-password-123',
        plan: 'starter',
      }),
    })
  ).json()
  const key = await (
    await fetch(`${origin}/v1/users/${user.user_id}/credentials`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({ name: 'bench', scopes: ['conversations:read'] }),
    })
  ).json()
  if (!key.secret) throw new Error(`key: ${JSON.stringify(key)}`)
  return { accountId: user.account_id, key: key.secret }
}

// The route's query shape (WHERE, ORDER BY, LIMIT as list.ts writes them); the select list is shortened
// (the plan does not depend on it).
const explainSql = (acc, extra) => `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
  SELECT json_build_object('conversation_id', conversations.id, 'started_at', to_char(conversations.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'summary', conversations.summary)::text AS j,
         conversations.id AS pos_id
  FROM conversations
  WHERE conversations.account_id = '${acc}' AND conversations.deleted_at IS NULL
    AND conversations.started_at >= now() - interval '30 days' AND conversations.started_at < now() ${extra}
  ORDER BY conversations.started_at DESC, conversations.id DESC LIMIT 51`

const QUERIES = {
  default: { qs: '', where: '' },
  channel: { qs: 'channel=phone_outbound', where: `AND conversations.channel IN ('phone_outbound')` },
  'agent+outcome': {
    qs: `agent_id=${AGENTS[1]}&outcome=resolved`,
    where: `AND conversations.agent_id IN ('${AGENTS[1]}') AND conversations.outcome IN ('resolved')`,
  },
  escalated: { qs: 'escalated=true', where: 'AND conversations.escalated' },
}

async function measure(origin, key, qs) {
  const url = `${origin}/v1/conversations${qs ? '?' + qs : ''}`
  const probe = await fetch(url, { headers: { authorization: `Bearer ${key}` } })
  const body = await probe.json()
  if (probe.status !== 200 || body.data.length !== 50)
    throw new Error(`probe ${url}: ${probe.status} ${JSON.stringify(body).slice(0, 300)}`)
  const bytes = JSON.stringify(body).length
  if (WARMUP > 0)
    await autocannon({ url, connections: CONNECTIONS, duration: WARMUP, headers: { authorization: `Bearer ${key}` } })
  const r = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    headers: { authorization: `Bearer ${key}` },
  })
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors, bytes }
}

const fmt = (name, m) =>
  `${name.padEnd(26)} ${m.rps.toFixed(0).padStart(7)} req/s   p50 ${String(m.p50).padStart(4)} ms   p99 ${String(m.p99).padStart(4)} ms   ${(m.bytes / 1024).toFixed(1)} KB${m.non2xx || m.errors ? `   non2xx ${m.non2xx} errors ${m.errors}` : ''}`

let server = await start()
const results = {}
try {
  const t = await tenant(server.origin)
  const seedStart = Date.now()
  if (!databaseUrl) await server.stop()
  await execSql({ databaseUrl, dataDir }, seedConversationsSql(t.accountId, ROWS))
  console.log(
    `engine   ${databaseUrl ? 'postgres' : 'pglite'}; seeded ${ROWS} conversations in ${((Date.now() - seedStart) / 1000).toFixed(1)} s; ${CONNECTIONS} connections, ${SECONDS} s each`,
  )

  if (databaseUrl) {
    const { default: postgres } = await import('postgres')
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} })
    try {
      for (const [name, q] of Object.entries(QUERIES)) {
        const plan = await sql.unsafe(explainSql(t.accountId, q.where))
        console.log(`\n-- EXPLAIN ${name}\n${plan.map((r) => r['QUERY PLAN']).join('\n')}`)
      }
    } finally {
      await sql.end()
    }
    console.log('')
  }

  for (const mode of ['pg', 'js']) {
    if (databaseUrl || mode === 'js') await server.stop()
    server = await start(mode === 'js' ? { SVC_BENCH_LIST_JSON: 'js' } : {})
    for (const [name, q] of Object.entries(QUERIES)) {
      const m = await measure(server.origin, t.key, q.qs)
      results[`${mode}:${name}`] = m
      console.log(fmt(`${name} (${mode === 'pg' ? 'JSON in PG' : 'mapped in JS'})`, m))
    }
  }
  console.log('')
  for (const name of Object.keys(QUERIES)) {
    console.log(
      `JSON in PG / mapped in JS, ${name}: ${(results[`pg:${name}`].rps / results[`js:${name}`].rps).toFixed(2)}x req/s`,
    )
  }
} finally {
  await server.stop()
  rmSync(dataDir, { recursive: true, force: true })
}
