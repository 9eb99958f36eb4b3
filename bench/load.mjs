#!/usr/bin/env node
// `npm run load`: a bounded mixed load against 2 instances behind the round-robin proxy on PostgreSQL and
// Redis, then the consistency checks (bench/load-consistency.mjs). Reports req/s, p50 and p99 per route and
// the 5xx count; exits 1 on any 5xx, any rate-limit 429 or any failed check. A suspension is mixed in (issue
// 30): an extra tenant with a user of its own runs a large campaign and is suspended with the master key at a
// seeded moment in the middle of the run (createSuspension; resumed mid-run when two minutes are left after,
// else after the run), and the check "suspension" proves it placed no call meanwhile.
//
//   DATABASE_URL=postgres://… npm run load -- --minutes 10 [--tenants 2] [--users 12] [--instances 2]
//     starts the cluster itself (scripts/cluster.mjs: the built server, a Redis of its own unless
//     REDIS_URL is given), with SVC_RATE_LIMITS set to LOAD_RATE_LIMITS; the actors pace each tenant's
//     requests of a class at PACE (80 %) of its limit, so the load stays within the limits.
//   LOAD_URL=http://host:port LOAD_MASTER_KEY=svc_mk_… npm run load
//     targets a running deployment instead (its own rate limits apply: pass --rate read=…,write=…).
//   BENCH_JSON=path writes the report as JSON as well.
// Run `npx nitropack build` first when the cluster is started here.
import { writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { checkConsistency } from './load-consistency.mjs'
import {
  LOAD_QUOTAS,
  LOAD_RATE_LIMITS,
  createActors,
  createClient,
  createLedger,
  createRecorder,
  createSuspension,
  prng,
  rateLimitsEnv,
  runActors,
  setupTenants,
  simulatedDials,
  startReceiver,
  startSite,
} from './load-workload.mjs'

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: process.env.LOAD_MINUTES ?? '10' },
    tenants: { type: 'string', default: '2' },
    users: { type: 'string', default: '12' },
    instances: { type: 'string', default: '2' },
    rate: { type: 'string' },
  },
})

/** The load's mix: weights of the ops of bench/load-workload.mjs (webhook fan-out follows from chats and calls). */
const LOAD_MIX = { read: 30, list: 20, chat: 30, kb: 6, calls: 14 }
/** The suspended tenant's user: the mix without calls (POST /calls checks a suspension only as it authenticates). */
const SUSPENDED_MIX = { read: 30, list: 20, chat: 30, kb: 6 }
const seed = Number(process.env.LOAD_SEED ?? Math.floor(Math.random() * 2 ** 31))

const limits = args.rate
  ? Object.fromEntries(args.rate.split(',').map((kv) => [kv.split('=')[0], Number(kv.split('=')[1])]))
  : LOAD_RATE_LIMITS
const log = (m) => console.error(m)

const site = await startSite()
const receiver = await startReceiver()
let cluster = null
let url = process.env.LOAD_URL
let masterKey = process.env.LOAD_MASTER_KEY
if (!url) {
  if (!process.env.DATABASE_URL) {
    console.error('Set DATABASE_URL (the cluster is started here) or LOAD_URL and LOAD_MASTER_KEY.')
    process.exit(2)
  }
  const { startCluster } = await import('../scripts/cluster.mjs')
  cluster = await startCluster({
    instances: Number(args.instances),
    databaseUrl: process.env.DATABASE_URL,
    redisUrl: process.env.REDIS_URL,
    env: {
      SVC_RATE_LIMITS: rateLimitsEnv(limits),
      SVC_QUOTAS: LOAD_QUOTAS,
      SVC_TELEPHONY: 'simulated',
      SVC_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
      SVC_WEBHOOK_RETRY_SCHEDULE: '1,2,4,8,16,32',
    },
    log,
  })
  url = cluster.url
  masterKey = cluster.masterKey
  log(`[load] ${cluster.nodes.length} instances behind ${url}`)
}

const recorder = createRecorder()
const request = createClient(`${url}/v1`, recorder)
let code = 0
try {
  log('[load] setting up tenants (builds, numbers, endpoints)')
  const everyone = await setupTenants({ request, masterKey, count: Number(args.tenants) + 1, site, receiver })
  const tenants = everyone.slice(0, -1)
  const suspended = everyone[everyone.length - 1]
  const ledger = createLedger(everyone)
  const ops = createActors({ request, ledger, limits })
  const minutes = Number(args.minutes)
  // Two contacts a second of the run: more than the campaign dials (1.9 a second in a 6-minute run on a 2-core
  // machine); it is stopped after the run.
  const suspension = createSuspension({
    request,
    masterKey,
    ledger,
    tenant: suspended,
    random: prng(seed),
    contacts: minutes * 120 + 60,
  })
  await suspension.prepare()
  const from = Date.now()
  const stopAt = from + minutes * 60_000
  log(
    `[load] ${minutes} min, ${args.users} users, ${tenants.length} tenants and a suspended one (seed ${seed}, LOAD_SEED replays its moments), limits ${rateLimitsEnv(limits)}`,
  )
  const ticker = setInterval(() => {
    const r = recorder.report(from, Date.now())
    log(
      `[load] ${r.seconds} s: ${r.requests} requests (${r.per_s}/s), 5xx ${r.status_5xx}, 429 ${r.status_429}, lost ${r.lost}`,
    )
  }, 30_000)
  await Promise.all([
    runActors({ ops, tenants, weights: LOAD_MIX, users: Number(args.users), stopAt }),
    runActors({ ops, tenants: [suspended], weights: SUSPENDED_MIX, users: 1, stopAt }),
    suspension.run({ from, stopAt, log: (m) => log(`[load] ${m}`) }),
  ])
  await suspension.finish()
  clearInterval(ticker)
  const to = Date.now()
  const report = recorder.report(from, to)
  log('[load] checking consistency')
  const checks = await checkConsistency({
    request,
    ledger,
    receiver,
    log,
    // What reached the simulated network, from the instances started here; a deployment's own (LOAD_URL)
    // cannot be read, and the check reads the calls' started_at instead.
    providerDials: () => (cluster ? simulatedDials(cluster.nodes.flatMap((n) => n.logs)) : null),
  })
  const all5xx = recorder.all.filter((r) => !r.failure && r.status >= 500).length
  // Requests of the load without an answer fail the run; the checks retry theirs (listed, not counted).
  const lost = report.lost
  const checkRetries = recorder.all
    .filter((r) => r.failure && r.t0 > to)
    .map((r) => `${r.method} ${r.path.split('?')[0]}: ${r.failure} ${r.error ?? r.status}`)
  // The load's own 429s (the checks wait out theirs: they read everything as fast as the limit allows).
  const rate429 = report.status_429
  const out = {
    minutes,
    instances: cluster?.nodes.length ?? null,
    limits,
    mix: LOAD_MIX,
    seed,
    suspension: ledger.suspension,
    ...report,
    status_5xx_total: all5xx,
    check_retries: checkRetries,
    checks,
  }
  print(out)
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(out, null, 2))
  if (all5xx || lost || rate429 || checks.some((c) => !c.ok)) code = 1
} catch (e) {
  console.error(e)
  code = 1
} finally {
  await cluster?.stop()
  await site.close()
  await receiver.close()
}
process.exit(code)

function print(r) {
  const lines = []
  lines.push(
    `load: ${r.minutes} min against ${r.instances ?? '?'} instances; ${r.requests} requests, ${r.per_s} req/s; 5xx ${r.status_5xx_total}; 429 ${r.status_429}; lost ${r.lost}`,
  )
  lines.push('route                                       req     req/s   p50 ms  p99 ms   2xx   4xx   429   5xx  lost')
  for (const x of r.routes)
    lines.push(
      `${x.route.padEnd(42)} ${String(x.requests).padStart(6)} ${String(x.per_s).padStart(8)} ${String(x.p50_ms).padStart(8)} ${String(x.p99_ms).padStart(7)} ${String(x['2xx']).padStart(5)} ${String(x['4xx']).padStart(5)} ${String(x['429']).padStart(5)} ${String(x['5xx']).padStart(5)} ${String(x.lost).padStart(5)}`,
    )
  if (r.check_retries.length) lines.push(`check requests retried after no answer: ${r.check_retries.join('; ')}`)
  lines.push('checks:')
  for (const c of r.checks) lines.push(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`)
  console.log(lines.join('\n'))
}
