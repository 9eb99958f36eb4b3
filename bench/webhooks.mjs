#!/usr/bin/env node
// Webhook deliveries per second to a local receiver with 1, 10 and 100 endpoints of one account.
// The server runs once to create three tenants and their endpoints (all subscribed to
// conversation.started, receiver in this process on 127.0.0.1), then for each scenario: stop, seed
// BENCH_WEBHOOK_DELIVERIES / N undispatched events straight into the outbox (PGlite directory, or
// PostgreSQL when DATABASE_URL is set), start again and time until the receiver has every delivery.
// Figures: deliveries per second from the first to the last delivery received (dispatch and send
// together, the backlog being there at start), and the time from spawning the server to the first
// delivery. BENCH_WEBHOOK_DELIVERIES (default 2000) per scenario. Run `npx nitropack build` first.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { entry, sleep, startBuiltServer } from './_server.mjs'

const databaseUrl = process.env.DATABASE_URL
const TOTAL = Number(process.env.BENCH_WEBHOOK_DELIVERIES ?? 2000)
const SCENARIOS = [1, 10, 100]

if (!existsSync(entry)) {
  console.error(`${entry} is missing: run \`npx nitropack build\` first.`)
  process.exit(1)
}

const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-webhooks-'))
const masterKey = 'svc_mk_live_' + randomBytes(36).toString('base64url')
const secret = randomBytes(32).toString('base64url')
const start = () =>
  startBuiltServer({
    dataDir,
    env: {
      SVC_MASTER_KEY: masterKey,
      SVC_SECRET: secret,
      SVC_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
      SVC_RATE_LIMITS: 'read=1000000,write=1000000',
    },
  })

// The receiver: counts per path prefix, answers 200 at once.
const counts = new Map()
const times = new Map()
const receiver = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    const scenario = req.url.split('/')[1]
    counts.set(scenario, (counts.get(scenario) ?? 0) + 1)
    const t = times.get(scenario) ?? { first: 0, last: 0 }
    const now = performance.now()
    if (!t.first) t.first = now
    t.last = now
    times.set(scenario, t)
    res.writeHead(200).end()
  })
})
await new Promise((r) => receiver.listen(0, '127.0.0.1', r))
const rxOrigin = `http://127.0.0.1:${receiver.address().port}`

async function call(origin, method, path, body, key = masterKey) {
  const r = await fetch(`${origin}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  })
  const json = await r.json()
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`)
  return json
}

async function seed(accountId, events) {
  const text = `INSERT INTO events (id, account_id, type, payload, created_at)
    SELECT 'evt_BENCH' || lpad(g::text, 17, '0') || '${accountId.replace('acc_', '')}', '${accountId}', 'conversation.started',
      jsonb_build_object('id', 'evt_BENCH' || g, 'type', 'conversation.started', 'created_at', now(), 'api_version', 'v1', 'account_id', '${accountId}',
        'data', jsonb_build_object('conversation_id', 'conv_p' || g, 'status', 'in_progress')), now()
    FROM generate_series(1, ${events}) g`
  if (databaseUrl) {
    const { default: postgres } = await import('postgres')
    const sql = postgres(databaseUrl, { onnotice: () => {} })
    await sql.unsafe(text)
    await sql.end()
  } else {
    const { PGlite } = await import('@electric-sql/pglite')
    const pg = await PGlite.create(join(dataDir, 'pglite'))
    await pg.exec(text)
    await pg.close()
  }
}

let server = await start()
const tenants = {}
for (const n of SCENARIOS) {
  const user = await call(server.origin, 'POST', '/users', {
    email: `bench-wh-${n}-${Date.now()}@example.com`,
    plan: 'starter',
  })
  const key = await call(server.origin, 'POST', `/users/${user.user_id}/credentials`, {
    name: 'bench',
    scopes: ['webhooks:manage'],
  })
  for (let i = 0; i < n; i++)
    await call(
      server.origin,
      'POST',
      '/webhooks/endpoints',
      { url: `${rxOrigin}/n${n}/${i}`, events: ['conversation.started'] },
      key.secret,
    )
  tenants[n] = { accountId: user.account_id, key: key.secret }
}
await server.stop()

const results = []
for (const n of SCENARIOS) {
  const events = Math.ceil(TOTAL / n)
  const expected = events * n
  await seed(tenants[n].accountId, events)
  const booted = performance.now()
  server = await start()
  const ready = performance.now()
  const deadline = Date.now() + 300_000
  let shown = Date.now()
  while ((counts.get(`n${n}`) ?? 0) < expected && Date.now() < deadline) {
    await sleep(20)
    if (process.env.BENCH_VERBOSE && Date.now() - shown > 5000) {
      shown = Date.now()
      console.error(`n=${n}: ${counts.get(`n${n}`) ?? 0}/${expected}`)
    }
  }
  if (process.env.BENCH_VERBOSE) console.error(`n=${n}: ${counts.get(`n${n}`) ?? 0}/${expected}`)
  const t = times.get(`n${n}`)
  const got = counts.get(`n${n}`) ?? 0
  const sendSeconds = (t.last - t.first) / 1000
  const firstAfterSpawn = (t.first - booted) / 1000
  // Let the last attempts be recorded before stopping.
  await sleep(500)
  const failed = await call(server.origin, 'GET', '/webhooks/deliveries?status=retrying&limit=1', null, tenants[n].key)
  await server.stop()
  results.push({
    n,
    events,
    expected,
    got,
    sendRate: got / sendSeconds,
    sendSeconds,
    firstAfterSpawn,
    boot: (ready - booted) / 1000,
    retrying: failed.data.length,
  })
}
receiver.close()

console.log(
  `\nWebhook deliveries to a local receiver (${databaseUrl ? 'PostgreSQL' : 'PGlite'}, node ${process.version}, ${new Date().toISOString()})\n`,
)
console.log(
  '| endpoints | events | deliveries | received | deliveries/s (first→last) | first→last s | spawn→first delivery s | spawn→healthy s | retries seen |',
)
console.log('|---|---|---|---|---|---|---|---|---|')
for (const r of results)
  console.log(
    `| ${r.n} | ${r.events} | ${r.expected} | ${r.got} | ${r.sendRate.toFixed(0)} | ${r.sendSeconds.toFixed(2)} | ${r.firstAfterSpawn.toFixed(2)} | ${r.boot.toFixed(2)} | ${r.retrying ? 'yes' : 'no'} |`,
  )
process.exit(0)
