#!/usr/bin/env node
// `npm run bench`: one instrument, one run, one client (autocannon) for every row, one markdown table.
//
// Rows (each: a BENCH_WARMUP_SECONDS warm-up, then BENCH_SECONDS measured; ratio = req/s of the row over
// req/s of its reference row "of"):
//   1. bare node:http hello-world                 50 connections; the reference of rows 2–4
//   2. GET /v1/health                             50 connections; goal ratio ≥ 0.40
//   3. GET /v1/accounts/{acc} (personal key)      50 connections; goal ratio ≥ 0.05 (PGlite), ≥ 0.08 (PostgreSQL)
//   4. GET /v1/conversations?limit=50             50 connections, first page over BENCH_ROWS seeded
//                                                 conversations; goal ratio ≥ 0.05 and p99 ≤ 60 ms
//   4b. (PostgreSQL with pgbench on PATH) the list's own statement from pgbench, 50 clients, no HTTP: the
//      PostgreSQL-bound reference, the most row 4 could reach here (its p50 column is pgbench's average)
//   5. GET /v1/conversations/{conv}               10 connections, each cycling over its own conversations;
//                                                 the reference of row 6
//   6. POST /v1/conversations/{conv}/messages     10 connections, local chat engine, each connection owning
//                                                 BENCH_CONVERSATIONS / 10 conversations and sending to them
//                                                 in turn (a conversation takes one turn at a time, 409
//                                                 otherwise); goal ratio ≥ 0.6, p50 ≤ 15 ms, p99 ≤ 50 ms
//   7. idle: the share of one core a server with no requests and no jobs due uses over BENCH_IDLE_SECONDS (60),
//      after boot settles (bench/idle-boot.mjs: /proc utime + stime); goal ≤ 2 %
//   8. first boot: a fresh data dir (on PostgreSQL, a fresh queue schema) to the first 200 of /v1/health; goal ≤ 5 s
// Interleaving (issue 36: bare node:http moved 1.9× between runs of issue 14): each row with a reference runs
// BENCH_ROUNDS (3) times, each time right after its reference, and its ratio is the median of the rounds' ratios;
// req/s, p50 and p99 are the medians of the rounds too. Rows 2–4 are interleaved with bare, row 4 also with the
// pgbench row when there is one (the list's goal is against it), row 6 with row 5.
// The bench measures only: a missed goal is printed as met = no, never asserted, and the exit code is 0.
// non-2xx counts non-2xx answers plus socket errors and timeouts.
//
// Set-up: builds once (`nitropack build`) unless BENCH_SKIP_BUILD is set. Servers (the bare one and the
// built one) run in their own processes pinned to CPU 1 with taskset when it exists, autocannon runs here
// on CPU 0. The built server gets a master key, the local chat engine, and rate limits and daily quotas
// lifted through SVC_RATE_LIMITS and SVC_QUOTAS (the limiter still counts every metered request). A user
// and a personal key are created over HTTP; the agent rows and the seeded conversations (one INSERT …
// SELECT generate_series, then VACUUM ANALYZE) are written by SQL:
//   - DATABASE_URL set (an EMPTY PostgreSQL database, migrated by the server): through the `postgres`
//     package while the server runs;
//   - otherwise (embedded PGlite, fresh data dir): the server is stopped, the bench opens the PGlite
//     directory itself, writes, closes it, and starts the server again.
// The chat agent's knowledge (a summary and a keep-verbatim document) and the chat conversations are
// created over HTTP after row 4, so that row 4 lists seeded rows only.
//
// Env: BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (3), BENCH_ROWS (1,000,000 on PostgreSQL, 100,000 on
// PGlite), BENCH_CONVERSATIONS (500), BENCH_SKIP_BUILD, BENCH_JSON (a path: the table as JSON
// { engine, node, date, seconds, rows: [{ name, connections, rps, p50, p99, non2xx, ratio, of, goal, met }] }),
// DATABASE_URL, BENCH_OTLP (1: tracing on, exporting to a loopback receiver; the spans it accepted are printed).
import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { entry, listening, root, sleep, startBuiltServer, startOtlpSink } from './_server.mjs'
import { measureIdleBoot } from './idle-boot.mjs'
import { call, chatAgentSql, execSql, giveChatKnowledge, listStatementSql, seedConversationsSql } from './_fixtures.mjs'

const databaseUrl = process.env.DATABASE_URL
const ENGINE = databaseUrl ? 'PostgreSQL' : 'PGlite'
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 3)
const ROWS = Number(process.env.BENCH_ROWS ?? (databaseUrl ? 1_000_000 : 100_000))
const LOAD_CONNECTIONS = 50
const CHAT_CONNECTIONS = 10
const CONVERSATIONS = Math.max(CHAT_CONNECTIONS, Number(process.env.BENCH_CONVERSATIONS ?? 500))
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3))
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60)
const CHAT_AGENT = 'agt_900000009'
const QUESTIONS = [
  'How much does a puncture repair cost?',
  'When are you open?',
  'Is there a loyalty discount code?',
  'Who is your mechanic?',
  'Do you sell electric bikes?',
]

// ---- pinning: servers on CPU 1, this process (autocannon) on CPU 0 --------------------------------------
const pin = spawnSync('taskset', ['-c', '1', 'true']).status === 0
const run = (args, opts) =>
  pin ? spawn('taskset', ['-c', '1', process.execPath, ...args], opts) : spawn(process.execPath, args, opts)
if (pin) spawnSync('taskset', ['-p', '-c', '0', String(process.pid)], { stdio: 'ignore' })

// ---- build -----------------------------------------------------------------------------------------------
if (!process.env.BENCH_SKIP_BUILD) {
  console.log('building (nitropack build)…')
  const b = spawnSync(process.execPath, [join(root, 'node_modules/nitropack/dist/cli/index.mjs'), 'build'], {
    cwd: root,
    encoding: 'utf8',
  })
  if (b.status !== 0) {
    console.error(b.stdout, b.stderr)
    throw new Error('build failed')
  }
}
if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npx nitropack build\` or unset BENCH_SKIP_BUILD.`)

// ---- servers ---------------------------------------------------------------------------------------------
async function startBare() {
  const src = `const s=require('node:http').createServer((q,r)=>{r.writeHead(200,{'content-type':'application/json'});r.end('{"hello":"world","ok":true}')});s.listen(0,'127.0.0.1',()=>console.log('Listening on http://127.0.0.1:'+s.address().port))`
  const child = run(['-e', src], { stdio: ['ignore', 'pipe', 'inherit'] })
  const origin = await listening(child)
  child.stdout.resume()
  return {
    origin,
    stop: async () => {
      child.removeAllListeners('exit')
      const exited = new Promise((r) => child.once('exit', r))
      child.kill('SIGTERM')
      await Promise.race([exited, sleep(5_000)])
    },
  }
}

// BENCH_OTLP=1: tracing on (decisions "Tracing"), every span exported to a loopback receiver in this process.
const otlp = process.env.BENCH_OTLP === '1' ? await startOtlpSink() : null
const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-'))
const masterKey = 'svc_mk_live_' + randomBytes(36).toString('base64url')
const secret = randomBytes(32).toString('base64url')
const startSvc = () =>
  startBuiltServer({
    dataDir,
    env: {
      SVC_MASTER_KEY: masterKey,
      SVC_SECRET: secret,
      SVC_CHAT_ENGINE: 'local',
      SVC_RATE_LIMITS: 'read=1000000000,write=1000000000,chat=1000000000,backfill=1000000000',
      SVC_QUOTAS: 'chat_messages=1000000000,kb_documents=100000',
      ...(otlp ? { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } : {}),
    },
    spawnWith: run,
  })

// ---- measuring -------------------------------------------------------------------------------------------
/** One statement from pgbench (prepared, LOAD_CONNECTIONS clients, on autocannon's CPU): req/s is its tps;
 *  pgbench gives an average latency, not percentiles, so p50 holds the average and p99 stays empty. */
function pgbenchRow(name, statement, warm = true) {
  const file = join(dataDir, 'pgbench.sql')
  writeFileSync(file, `${statement}\n`)
  const args = ['-n', '-M', 'prepared', '-c', String(LOAD_CONNECTIONS), '-j', '1', '-f', file, databaseUrl]
  const runFor = (seconds) =>
    spawnSync(pin ? 'taskset' : 'pgbench', [...(pin ? ['-c', '0', 'pgbench'] : []), '-T', String(seconds), ...args], {
      encoding: 'utf8',
    })
  if (warm) runFor(WARMUP)
  const r = runFor(SECONDS)
  const tps = Number(/tps = ([\d.]+)/.exec(r.stdout)?.[1])
  const avg = Number(/latency average = ([\d.]+) ms/.exec(r.stdout)?.[1])
  const failed = Number(/number of failed transactions: (\d+)/.exec(r.stdout)?.[1] ?? 0)
  // A reference that could not run (no connection slots, say) is left out, not fatal to the table.
  if (!Number.isFinite(tps)) {
    console.error(`[bench] ${name} left out: ${(r.stderr || r.stdout).trim().split('\n').at(-1)}`)
    return null
  }
  return {
    name,
    connections: LOAD_CONNECTIONS,
    rps: tps,
    p50: Math.round(avg),
    p99: null,
    non2xx: failed,
    total: Math.round(tps * SECONDS),
    codes: [],
  }
}

function cannon(opts) {
  return new Promise((res, rej) => autocannon(opts, (err, r) => (err ? rej(err) : res(r))))
}

/** Warm-up, then the measured run, with the same autocannon options (`make()` builds fresh ones per run). */
async function measure(name, connections, make, warm = true) {
  if (warm) {
    await cannon({ ...make(), connections, duration: WARMUP })
    // A request cut off by the end of the warm-up may still be running on the server: let it finish.
    await sleep(500)
  }
  const r = await cannon({ ...make(), connections, duration: SECONDS })
  await sleep(500)
  const codes = Object.entries(r.statusCodeStats ?? {})
    .filter(([code]) => !code.startsWith('2'))
    .map(([code, s]) => `${code}×${s.count}`)
  if (r.errors) codes.push(`errors×${r.errors}${r.timeouts ? ` (timeouts ${r.timeouts})` : ''}`)
  return {
    name,
    connections,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    total: r.requests.total,
    non2xx: r.non2xx + r.errors,
    codes,
  }
}

/**
 * autocannon options where connection c (numbered in setupClient) sends `request(c, i)` as its i-th request;
 * the cursors persist across runs (warm-up, measured run), so a run never starts on the conversation the
 * previous run's last (possibly cut-off) request went to.
 */
function perConnection(origin, cursors, request) {
  return () => {
    let next = 0
    return {
      url: origin,
      setupClient(client) {
        const c = next++
        const first = request(c, cursors[c])
        client.setRequests([
          {
            ...first,
            setupRequest(req) {
              const r = request(c, cursors[c]++)
              req.method = r.method
              req.path = r.path
              req.headers = { ...req.headers, ...r.headers }
              if (r.body !== undefined) req.body = r.body
              return req
            },
          },
        ])
      },
    }
  }
}

const median = (xs) => {
  const v = xs.filter(Number.isFinite).sort((a, b) => a - b)
  return v.length ? (v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2) : null
}
/** The row of the median ratio's round-by-round medians: req/s, p50 and p99 each their own median. */
function medianRow(rounds) {
  const [first] = rounds
  return {
    ...first,
    rps: median(rounds.map((r) => r.rps)),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    non2xx: rounds.reduce((n, r) => n + r.non2xx, 0),
    total: rounds.reduce((n, r) => n + r.total, 0),
    codes: rounds.flatMap((r) => r.codes),
  }
}
/**
 * Runs `ref` then `row`, ROUNDS times (warm-ups in the first round only), and answers both as medianRow and the
 * median of the rounds' ratios row/ref. A round whose reference could not run (null) is left out.
 */
async function interleaved(ref, row) {
  const refs = []
  const rows = []
  const ratios = []
  for (let i = 0; i < ROUNDS; i++) {
    const a = await ref(i === 0)
    const b = await row(i === 0)
    if (b) rows.push(b)
    if (a) refs.push(a)
    if (a && b) ratios.push(b.rps / a.rps)
  }
  return {
    ref: refs.length ? medianRow(refs) : null,
    row: medianRow(rows),
    ratio: median(ratios),
    rounds: ratios.length,
  }
}

// ---- the run ---------------------------------------------------------------------------------------------
const bare = await startBare()
let svc = await startSvc()
const results = []
let seedSeconds = 0
let probeNote = ''
try {
  // Tenant: a user and a personal key over HTTP.
  const user = await call(svc.origin, 'POST', '/users', masterKey, { email: `bench-${Date.now()}@example.com` })
  const cred = await call(svc.origin, 'POST', `/users/${user.user_id}/credentials`, masterKey, {
    name: 'bench',
    scopes: ['accounts:read', 'conversations:read', 'conversations:write', 'kb:read', 'kb:write', 'agents:write'],
  })
  if (!cred.secret) throw new Error(`key: ${JSON.stringify(cred)}`)
  const key = cred.secret
  const auth = { authorization: `Bearer ${key}` }

  // Agent rows and BENCH_ROWS conversations by SQL.
  const seedStart = Date.now()
  if (databaseUrl)
    await execSql({ databaseUrl, dataDir }, [
      chatAgentSql(CHAT_AGENT, user.account_id),
      ...seedConversationsSql(user.account_id, ROWS),
    ])
  else {
    await svc.stop()
    await execSql({ databaseUrl, dataDir }, [
      chatAgentSql(CHAT_AGENT, user.account_id),
      ...seedConversationsSql(user.account_id, ROWS),
    ])
    svc = await startSvc()
  }
  seedSeconds = (Date.now() - seedStart) / 1000
  const origin = svc.origin

  // Rows 1–4: one URL each, 50 connections, each interleaved with bare node:http.
  const bareRun = (warm) =>
    measure('bare node:http hello-world', LOAD_CONNECTIONS, () => ({ url: `${bare.origin}/` }), warm)
  const bareRounds = []
  const vsBare = async (name, make) => {
    const r = await interleaved(
      async (warm) => {
        const b = await bareRun(warm)
        bareRounds.push(b)
        return b
      },
      (warm) => measure(name, LOAD_CONNECTIONS, make, warm),
    )
    return { ...r.row, ratio: r.ratio, of: 'bare node:http hello-world', rounds: r.rounds }
  }
  const bareIndex = results.push(null) - 1
  results.push(await vsBare('GET /v1/health', () => ({ url: `${origin}/v1/health` })))
  results.push(
    await vsBare('GET /v1/accounts/{acc}', () => ({
      url: `${origin}/v1/accounts/${user.account_id}`,
      headers: auth,
    })),
  )
  const listUrl = `${origin}/v1/conversations?limit=50`
  const probe = await fetch(listUrl, { headers: auth })
  const page = await probe.json().catch(() => null)
  if (probe.status !== 200 || page?.data?.length !== 50)
    throw new Error(`probe ${listUrl}: ${probe.status} ${JSON.stringify(page).slice(0, 300)}`)
  const listRun = (warm) =>
    measure('GET /v1/conversations?limit=50', LOAD_CONNECTIONS, () => ({ url: listUrl, headers: auth }), warm)
  results.push(await vsBare('GET /v1/conversations?limit=50', () => ({ url: listUrl, headers: auth })))
  // The list's PostgreSQL-bound reference: the same statement from pgbench, same connections, no HTTP or
  // Node at all; the list's goal (issue 36) is a ratio of it, so the two are interleaved too.
  if (databaseUrl && spawnSync('pgbench', ['--version']).status === 0) {
    const now = Date.now()
    const statement = listStatementSql(
      user.account_id,
      new Date(now - 30 * 86_400_000).toISOString(),
      new Date(now).toISOString(),
    )
    const name = 'PostgreSQL alone: the list statement (pgbench)'
    const r = await interleaved(
      async (warm) => pgbenchRow(name, statement, warm),
      (warm) => listRun(warm),
    )
    if (r.ref) {
      results.push({
        ...r.ref,
        ratio: median(bareRounds.map((b) => r.ref.rps / b.rps)),
        of: 'bare node:http hello-world',
      })
      results.push({
        ...r.row,
        name: 'GET /v1/conversations?limit=50 (vs pgbench)',
        ratio: r.ratio,
        of: name,
        rounds: r.rounds,
      })
    }
  }
  results[bareIndex] = { ...medianRow(bareRounds), ratio: null, of: null }

  // Chat set-up over HTTP: the agent's knowledge, then the conversations (each with its greeting).
  await giveChatKnowledge(origin, key, CHAT_AGENT)
  const convs = []
  while (convs.length < CONVERSATIONS) {
    const batch = Math.min(CHAT_CONNECTIONS, CONVERSATIONS - convs.length)
    const made = await Promise.all(
      Array.from({ length: batch }, () =>
        call(origin, 'POST', '/conversations', key, { agent_id: CHAT_AGENT, send_greeting: true }),
      ),
    )
    for (const c of made) convs.push(c.conversation_id)
  }
  const answer = await call(origin, 'POST', `/conversations/${convs[0]}/messages`, key, { text: QUESTIONS[2] })
  probeNote = `probe answer ${JSON.stringify(answer.turn.text.slice(0, 80))} (unanswered ${answer.turn.unanswered})`

  // Rows 5–6: 10 connections, connection c owns conversations [c·per, (c+1)·per) and cycles over them; row 6
  // interleaved with row 5, its reference.
  const per = Math.floor(CONVERSATIONS / CHAT_CONNECTIONS)
  const convOf = (c, i) => convs[c * per + (i % per)]
  const getCursors = new Array(CHAT_CONNECTIONS).fill(0)
  // Client 0 starts after the probe's conversation.
  const postCursors = new Array(CHAT_CONNECTIONS).fill(0)
  postCursors[0] = 1
  const chat = await interleaved(
    (warm) =>
      measure(
        'GET /v1/conversations/{conv}',
        CHAT_CONNECTIONS,
        perConnection(origin, getCursors, (c, i) => ({
          method: 'GET',
          path: `/v1/conversations/${convOf(c, i)}`,
          headers: auth,
        })),
        warm,
      ),
    (warm) =>
      measure(
        'POST /v1/conversations/{conv}/messages',
        CHAT_CONNECTIONS,
        perConnection(origin, postCursors, (c, i) => ({
          method: 'POST',
          path: `/v1/conversations/${convOf(c, i)}/messages`,
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ text: QUESTIONS[(i + c) % QUESTIONS.length] }),
        })),
        warm,
      ),
  )
  results.push({ ...chat.ref, ratio: null, of: null })
  results.push({ ...chat.row, ratio: chat.ratio, of: 'GET /v1/conversations/{conv}', rounds: chat.rounds })
} finally {
  await svc.stop()
  await bare.stop()
  rmSync(dataDir, { recursive: true, force: true })
}

// Rows 7–8: a server of its own on a fresh data dir (and a fresh queue schema on PostgreSQL), nothing else running.
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
const idleBoot =
  IDLE_SECONDS > 0 || process.env.BENCH_BOOT !== '0'
    ? await measureIdleBoot({ idleSeconds: IDLE_SECONDS, spawnWith: run })
    : null
const figures = idleBoot
  ? [
      {
        name: 'first boot on a fresh database: s to /v1/health ok',
        value: round(idleBoot.bootSeconds, 1),
        note: `${round(idleBoot.bootCpuSeconds, 1)} s of CPU`,
        goal: databaseUrl ? null : '≤ 5 s',
        met: databaseUrl ? null : idleBoot.bootSeconds <= 5,
      },
      ...(idleBoot.idleShare === null
        ? []
        : [
            {
              name: `idle: % of one core over ${idleBoot.idleSeconds} s`,
              value: round(idleBoot.idleShare * 100, 2),
              note: `load average ${loadavg()}`,
              goal: '≤ 2 %',
              met: idleBoot.idleShare <= 0.02,
            },
          ]),
    ]
  : []

// ---- goals, table --------------------------------------------------------------------------------------
const goals = {
  'GET /v1/health': { ratio: 0.4 },
  'GET /v1/accounts/{acc}': { ratio: databaseUrl ? 0.08 : 0.05 },
  'GET /v1/conversations?limit=50': { ratio: 0.05, p99: 60 },
  'GET /v1/conversations?limit=50 (vs pgbench)': { ratio: 0.6, p99: 100 },
  'POST /v1/conversations/{conv}/messages': databaseUrl
    ? { ratio: 0.7, p50: 12, p99: 40 }
    : { ratio: 0.6, p50: 15, p99: 50 },
}
function round(x, d) {
  return Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null
}
const rows = results.map((r, i) => {
  const g = goals[r.name]
  const ratio = r.ratio ?? null
  const parts = []
  const checks = []
  if (g?.ratio !== undefined) {
    parts.push(`ratio ≥ ${g.ratio}`)
    checks.push(ratio >= g.ratio)
  }
  if (g?.p50 !== undefined) {
    parts.push(`p50 ≤ ${g.p50} ms`)
    checks.push(r.p50 <= g.p50)
  }
  if (g?.p99 !== undefined) {
    parts.push(`p99 ≤ ${g.p99} ms`)
    checks.push(r.p99 <= g.p99)
  }
  const met = checks.length ? checks.every(Boolean) : null
  return {
    name: r.name,
    engine: i === 0 ? null : ENGINE,
    connections: r.connections,
    rps: round(r.rps, 1),
    p50: r.p50,
    p99: r.p99,
    non2xx: r.non2xx,
    ratio: round(ratio, 3),
    of: r.of ?? null,
    rounds: r.rounds ?? null,
    goal: parts.length ? parts.join(', ') : null,
    met,
    total: r.total,
    codes: r.codes,
  }
})

const date = new Date().toISOString()
const pinning = pin ? 'servers on CPU 1, autocannon on CPU 0 (taskset)' : 'none (no taskset)'
console.log(`\nengine   ${ENGINE}`)
console.log(`node     ${process.version}`)
console.log(`cpu      ${pinning}`)
console.log(`date     ${date}`)
console.log(
  `tracing  ${otlp ? `on: ${otlp.spans} spans in ${otlp.posts} exports accepted by the loopback receiver` : 'off'}`,
)
console.log(`rounds   ${ROUNDS} (each row right after its reference; ratio = median of the rounds' ratios)`)
console.log(`loadavg  ${loadavg()} at the end`)
console.log(
  `load     autocannon, ${SECONDS} s per row after a ${WARMUP} s warm-up; ${ROWS} seeded conversations (${seedSeconds.toFixed(1)} s to seed), ${CONVERSATIONS} chat conversations; ${probeNote}\n`,
)
const dash = (x) => (x === null || x === undefined ? '—' : x)
console.log('| row | engine | connections | req/s | p50 ms | p99 ms | non-2xx | ratio | of | goal | met |')
console.log('|---|---|---|---|---|---|---|---|---|---|---|')
for (const r of rows)
  console.log(
    `| ${r.name} | ${dash(r.engine)} | ${r.connections} | ${r.rps === null ? '—' : r.rps.toFixed(0)} | ${dash(r.p50)} | ${dash(r.p99)} | ${r.non2xx} | ${r.ratio === null ? '—' : r.ratio.toFixed(3)} | ${dash(r.of)} | ${dash(r.goal)} | ${r.met === null ? '—' : r.met ? 'yes' : 'no'} |`,
  )
if (figures.length) {
  console.log('\n| figure | engine | value | | goal | met |')
  console.log('|---|---|---|---|---|---|')
  for (const f of figures)
    console.log(
      `| ${f.name} | ${ENGINE} | ${f.value} | ${f.note} | ${dash(f.goal)} | ${f.met === null ? '—' : f.met ? 'yes' : 'no'} |`,
    )
}
for (const r of rows) if (r.codes.length) console.log(`\n${r.name}: ${r.codes.join(', ')} (of ${r.total} requests)`)

if (process.env.BENCH_JSON) {
  const json = {
    engine: ENGINE,
    node: process.version,
    date,
    tracing: !!otlp,
    seconds: SECONDS,
    rounds: ROUNDS,
    figures,
    rows: rows.map(({ name, connections, rps, p50, p99, non2xx, ratio, of, goal, met }) => ({
      name,
      connections,
      rps,
      p50,
      p99,
      non2xx,
      ratio,
      of,
      goal,
      met,
    })),
  }
  writeFileSync(process.env.BENCH_JSON, JSON.stringify(json, null, 2) + '\n')
  console.log(`\nJSON written to ${process.env.BENCH_JSON}`)
}
process.exit(0)
