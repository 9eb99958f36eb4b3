#!/usr/bin/env node
// POST /v1/conversations/{conv}/messages server overhead with the local engine: requests/s and p50/p99
// latency over many conversations, against a bare GET of the same server measured by the same client
// loop. One turn at a time per conversation (409 turn_in_progress otherwise), so BENCH_CLIENTS
// concurrent clients each own BENCH_CONVERSATIONS / BENCH_CLIENTS conversations and send to them in
// turn: never two messages in flight for one conversation, and every answer is expected to be 200.
//
// Run `npx nitropack build` first; this script builds nothing. DATABASE_URL set: that PostgreSQL
// database (migrated by the server; anything in it stays); otherwise a fresh embedded PGlite data dir.
// The agent row is written by SQL (there is no create-agent route without a site build), its knowledge
// over HTTP: a summary (PATCH kb/summary) and a keep-as-is document. Rate limits and the daily
// chat_messages quota are lifted through SVC_RATE_LIMITS and SVC_QUOTAS. Figures only, no asserts.
// BENCH_SECONDS (default 10) per measurement after BENCH_WARMUP_SECONDS (default 3). BENCH_OTLP=1 turns
// tracing on (decisions "Tracing"): the server exports to a loopback OTLP/HTTP receiver in this process, which
// counts what it accepts.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { entry, startBuiltServer, startOtlpSink } from './_server.mjs'
import { call, chatAgentSql, execSqlBeside, giveChatKnowledge } from './_fixtures.mjs'

const databaseUrl = process.env.DATABASE_URL
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 3)
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 10)
const CONVERSATIONS = Math.max(CLIENTS, Number(process.env.BENCH_CONVERSATIONS ?? 200))
const AGENT = `agt_${900_000_000 + Math.floor(Math.random() * 99_999_999)}`
const QUESTIONS = [
  'How much does a puncture repair cost?',
  'When are you open?',
  'Is there a loyalty discount code?',
  'Who is your mechanic?',
  'Do you sell electric bikes?',
]

if (!existsSync(entry)) {
  console.error(`${entry} is missing: run \`npx nitropack build\` first.`)
  process.exit(1)
}

/** A loopback OTLP/HTTP trace receiver: answers 200 to every export and counts requests and spans. */
const otlp = process.env.BENCH_OTLP === '1' ? await startOtlpSink() : null

const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-msg-'))
const masterKey = 'svc_mk_live_' + randomBytes(36).toString('base64url')
const secret = randomBytes(32).toString('base64url')
const start = () =>
  startBuiltServer({
    dataDir,
    env: {
      SVC_MASTER_KEY: masterKey,
      SVC_SECRET: secret,
      SVC_CHAT_ENGINE: 'local',
      SVC_RATE_LIMITS: 'read=100000000,write=100000000,chat=100000000',
      SVC_QUOTAS: 'chat_messages=100000000,kb_documents=100000',
      ...(otlp ? { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } : {}),
    },
  })

const pct = (sorted, p) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN

/**
 * CLIENTS loops for `seconds`: client c sends `request(c, i)` for its i-th request, waits for the answer,
 * and sends the next. Answers req/s, p50/p99 (ms) and the non-2xx count.
 */
async function drive(seconds, request) {
  const latencies = []
  let non2xx = 0
  const until = performance.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      for (let i = 0; performance.now() < until; i++) {
        const { url, init } = request(c, i)
        const t0 = performance.now()
        const r = await fetch(url, init)
        await r.arrayBuffer()
        latencies.push(performance.now() - t0)
        if (r.status >= 300) non2xx++
      }
    }),
  )
  latencies.sort((a, b) => a - b)
  return {
    rps: latencies.length / seconds,
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
    requests: latencies.length,
    non2xx,
  }
}

/**
 * The server process's CPU time so far in ms (utime + stime of /proc/<pid>/stat, 100 ticks a second), NaN
 * where there is no /proc. CPU per request, unlike req/s, holds on a machine shared with other work.
 */
function cpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return Number.NaN
  }
}

async function measure(request) {
  await drive(WARMUP, request)
  const cpu0 = cpuMs(server.pid)
  const r = await drive(SECONDS, request)
  return { ...r, cpuPerRequest: (cpuMs(server.pid) - cpu0) / r.requests }
}

let server = await start()
const results = []
try {
  const h = { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' }
  const user = await (
    await fetch(`${server.origin}/v1/users`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({ email: `bench-msg-${Date.now()}@example.com` }),
    })
  ).json()
  const cred = await (
    await fetch(`${server.origin}/v1/users/${user.user_id}/credentials`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({
        name: 'bench',
        scopes: ['conversations:read', 'conversations:write', 'kb:read', 'kb:write', 'agents:write'],
      }),
    })
  ).json()
  if (!cred.secret) throw new Error(`key: ${JSON.stringify(cred)}`)
  const key = cred.secret
  server = await execSqlBeside(server, start, { databaseUrl, dataDir }, [chatAgentSql(AGENT, user.account_id)])
  const origin = server.origin
  await giveChatKnowledge(origin, key, AGENT)
  const convs = []
  for (let i = 0; i < CONVERSATIONS; i++)
    convs.push(
      (await call(origin, 'POST', '/conversations', key, { agent_id: AGENT, send_greeting: true })).conversation_id,
    )
  const probe = await call(origin, 'POST', `/conversations/${convs[0]}/messages`, key, { text: QUESTIONS[0] })
  console.log(`tracing  ${otlp ? `on, exporting to ${otlp.url}` : 'off'}`)
  console.log(
    `engine   ${databaseUrl ? 'postgres' : 'pglite'}; ${CONVERSATIONS} conversations, ${CLIENTS} clients, ${SECONDS} s after a ${WARMUP} s warm-up; probe answer: ${JSON.stringify(probe.turn.text.slice(0, 80))} (unanswered ${probe.turn.unanswered}, engine latency_ms ${probe.turn.latency_ms})`,
  )

  const auth = { authorization: `Bearer ${key}` }
  const perClient = Math.floor(CONVERSATIONS / CLIENTS)
  const convOf = (c, i) => convs[c * perClient + (i % perClient)]
  results.push(['GET /v1/health (no auth, db check)', await measure(() => ({ url: `${origin}/v1/health`, init: {} }))])
  results.push([
    'GET /v1/conversations/{conv}?include=summary (key, metered)',
    await measure((c, i) => ({
      url: `${origin}/v1/conversations/${convOf(c, i)}?include=summary`,
      init: { headers: auth },
    })),
  ])
  results.push([
    'POST /v1/conversations/{conv}/messages (local engine)',
    await measure((c, i) => ({
      url: `${origin}/v1/conversations/${convOf(c, i)}/messages`,
      init: {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ text: QUESTIONS[i % QUESTIONS.length] }),
      },
    })),
  ])
  const turns = await call(origin, 'GET', `/conversations/${convs[0]}?include=transcript`, key)
  console.log(`turns in conversation 1 after the run: ${turns.transcript.length}\n`)
} finally {
  await server.stop()
  rmSync(dataDir, { recursive: true, force: true })
}

console.log('| target | req/s | p50 ms | p99 ms | requests | non-2xx | server CPU ms/req |')
console.log('|---|---|---|---|---|---|---|')
for (const [name, r] of results)
  console.log(
    `| ${name} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.requests} | ${r.non2xx} | ${r.cpuPerRequest.toFixed(2)} |`,
  )
const [health, get, post] = results.map((r) => r[1])
console.log(
  `\nmessages / GET conversation: ${(post.rps / get.rps).toFixed(3)} of the req/s; p50 +${(post.p50 - get.p50).toFixed(1)} ms over the GET`,
)
console.log(`messages / health: ${(post.rps / health.rps).toFixed(3)} of the req/s`)
if (otlp) console.log(`OTLP receiver: ${otlp.posts} exports, ${otlp.spans} spans accepted`)
process.exit(0)
