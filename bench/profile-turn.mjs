#!/usr/bin/env node
// `npm run bench:profile-turn`: a CPU profile of the chat turn. Starts the built server under
// `node --cpu-prof`, drives POST /v1/conversations/{conv}/messages (local engine) from BENCH_CLIENTS
// (default 10) clients for BENCH_SECONDS (default 10), stops the server so that it writes the profile,
// and prints where the server's time went: idle, GC, by package, and the 20 functions with the most
// self time. The .cpuprofile file stays (its path is printed) for Chrome DevTools or speedscope.
// DATABASE_URL set: that PostgreSQL database (anything in it stays); otherwise a fresh PGlite data dir.
// Run `npx nitropack build` first; this script builds nothing. Figures only, no asserts.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { entry, startBuiltServer } from './_server.mjs'
import { call, chatAgentSql, execSql } from './_fixtures.mjs'

const databaseUrl = process.env.DATABASE_URL
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 10)
const PER_CLIENT = 20
const AGENT = `agt_${800_000_000 + Math.floor(Math.random() * 99_999_999)}`

if (!existsSync(entry)) {
  console.error(`${entry} is missing: run \`npx nitropack build\` first.`)
  process.exit(1)
}

const dataDir = mkdtempSync(join(tmpdir(), 'svc-prof-'))
const profDir = mkdtempSync(join(tmpdir(), 'svc-cpuprofile-'))
const masterKey = `svc_mk_live_${randomBytes(36).toString('base64url')}`
const env = {
  SVC_MASTER_KEY: masterKey,
  SVC_SECRET: randomBytes(32).toString('base64url'),
  SVC_CHAT_ENGINE: 'local',
  SVC_RATE_LIMITS: 'read=100000000,write=100000000,chat=100000000',
  SVC_QUOTAS: 'chat_messages=100000000,kb_documents=100000',
}
const start = (profile) =>
  startBuiltServer({
    dataDir,
    env,
    spawnWith: (args, opts) =>
      spawn(process.execPath, profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, ...args] : args, opts),
  })

// Set-up on an unprofiled server: tenant, key, agent (by SQL: no create route without a site build).
let server = await start(false)
const user = await call(server.origin, 'POST', '/users', masterKey, { email: `prof-${Date.now()}@example.com` })
const key = (
  await call(server.origin, 'POST', `/users/${user.user_id}/credentials`, masterKey, {
    name: 'profile',
    scopes: ['conversations:read', 'conversations:write', 'kb:read', 'kb:write'],
  })
).secret
await server.stop()
await execSql({ databaseUrl, dataDir }, [chatAgentSql(AGENT, user.account_id)])
server = await start(false)
await call(server.origin, 'PATCH', `/agents/${AGENT}/kb/summary`, key, {
  text: 'Quokka Cycles repairs bicycles in Hobart. A puncture repair costs $12. A full service costs $89. The shop opens Tuesday to Sunday from 9am.',
})
const convs = []
for (let i = 0; i < CLIENTS * PER_CLIENT; i++)
  convs.push((await call(server.origin, 'POST', '/conversations', key, { agent_id: AGENT })).conversation_id)
await server.stop()
// The profiled life: boot, the turns, shutdown.
server = await start(true)
const { origin } = server

const QUESTIONS = ['How much is a puncture repair?', 'When are you open?', 'What does a service cost?']
let turns = 0
let non2xx = 0
const until = performance.now() + SECONDS * 1000
await Promise.all(
  Array.from({ length: CLIENTS }, async (_, c) => {
    for (let i = 0; performance.now() < until; i++) {
      const r = await fetch(`${origin}/v1/conversations/${convs[c * PER_CLIENT + (i % PER_CLIENT)]}/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: QUESTIONS[i % QUESTIONS.length] }),
      })
      await r.arrayBuffer()
      if (r.status >= 300) non2xx++
      turns++
    }
  }),
)
await server.stop()

const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'))
if (!file) {
  console.error(`no .cpuprofile in ${profDir}: the server did not exit cleanly`)
  process.exit(1)
}
const profile = JSON.parse(readFileSync(join(profDir, file), 'utf8'))
const totalUs = profile.endTime - profile.startTime
const perSample = totalUs / profile.samples.length
const self = new Map()
const byBucket = new Map()
const bucketOf = (url, name) => {
  if (!url) return name.startsWith('(') ? name : '(native)'
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (m) return m[1]
  if (url.startsWith('node:')) return 'node core'
  if (url.includes('.output/server')) return 'service code (.output)'
  return url
}
for (const n of profile.nodes) {
  const ms = (n.hitCount * perSample) / 1000
  if (!ms) continue
  const { functionName, url, lineNumber } = n.callFrame
  const name = functionName || '(anonymous)'
  const where = url ? `${url.replace(/^.*\/(\.output|node_modules)\//, '$1/')}:${lineNumber + 1}` : ''
  const k = `${name} ${where}`
  self.set(k, (self.get(k) ?? 0) + ms)
  const b = bucketOf(url, name)
  byBucket.set(b, (byBucket.get(b) ?? 0) + ms)
}
const totalMs = totalUs / 1000
const busyMs = totalMs - (byBucket.get('(idle)') ?? 0)
const pct = (ms) => `${((ms / totalMs) * 100).toFixed(1)}%`
console.log(
  `engine ${databaseUrl ? 'PostgreSQL' : 'PGlite'}; ${turns} turns (${non2xx} non-2xx) in ${SECONDS} s from ${CLIENTS} clients = ${(turns / SECONDS).toFixed(0)} turns/s`,
)
console.log(
  `profile ${join(profDir, file)}: ${totalMs.toFixed(0)} ms sampled (whole server life), busy ${busyMs.toFixed(0)} ms, ${(busyMs / Math.max(1, turns)).toFixed(2)} ms of server CPU per turn\n`,
)
console.log('| where | self ms | share |\n|---|---|---|')
for (const [b, ms] of [...byBucket].sort((a, b) => b[1] - a[1]).slice(0, 12))
  console.log(`| ${b} | ${ms.toFixed(0)} | ${pct(ms)} |`)
console.log('\n| function (self time) | ms | share |\n|---|---|---|')
for (const [k, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 20))
  console.log(`| ${k.replace(/\|/g, '\\|')} | ${ms.toFixed(0)} | ${pct(ms)} |`)
process.exit(0)
