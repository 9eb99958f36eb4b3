#!/usr/bin/env node
// Voice turn latency on the simulated network: from the end of the caller's speech (the last voiced audio
// frame the session received) to the first frame of the agent's answer sent back, with the local engine
// and simulated speech. BENCH_CALLS calls (default 10) of BENCH_UTTERANCES utterances (default 5) each,
// one call at a time, so the figure is one turn's path, not a queue. Each answer turn stores that latency
// as latency_ms; the script reads them back over HTTP and prints p50/p99.
//
// Run `npx nitropack build` first; this script builds nothing. DATABASE_URL set: that PostgreSQL database
// (migrated by the server); otherwise a fresh embedded PGlite data dir. Figures only, no asserts.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { entry, sleep, startBuiltServer } from './_server.mjs'
import { call, chatAgentSql, execSql, giveChatKnowledge } from './_fixtures.mjs'

const databaseUrl = process.env.DATABASE_URL
const CALLS = Number(process.env.BENCH_CALLS ?? 10)
const UTTERANCES = Number(process.env.BENCH_UTTERANCES ?? 5)
const AGENT = `agt_${900_000_000 + Math.floor(Math.random() * 99_999_999)}`
const NUMBER = `+1415555${String(1000 + Math.floor(Math.random() * 8999))}`
const QUESTIONS = [
  'How much does a puncture repair cost?',
  'When are you open?',
  'Is there a loyalty discount code?',
  'Who is your mechanic?',
  'How long does a full service take?',
]

if (!existsSync(entry)) {
  console.error(`${entry} is missing: run \`npx nitropack build\` first.`)
  process.exit(1)
}

const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-voice-'))
const masterKey = 'svc_mk_live_' + randomBytes(36).toString('base64url')
const start = () =>
  startBuiltServer({
    dataDir,
    env: {
      SVC_MASTER_KEY: masterKey,
      SVC_SECRET: randomBytes(32).toString('base64url'),
      SVC_CHAT_ENGINE: 'local',
      SVC_TELEPHONY: 'simulated',
      SVC_SPEECH: 'simulated',
      SVC_RATE_LIMITS: 'read=100000000,write=100000000',
    },
  })
const pct = (sorted, p) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN

let server = await start()
try {
  const user = await call(server.origin, 'POST', '/users', masterKey, {
    email: `bench-voice-${Date.now()}@example.com`,
  })
  const cred = await call(server.origin, 'POST', `/users/${user.user_id}/credentials`, masterKey, {
    name: 'bench',
    scopes: ['conversations:read', 'conversations:write', 'kb:read', 'kb:write', 'agents:read', 'agents:write'],
  })
  const key = cred.secret
  if (databaseUrl) await execSql({ databaseUrl, dataDir }, [chatAgentSql(AGENT, user.account_id)])
  else {
    await server.stop()
    await execSql({ databaseUrl, dataDir }, [chatAgentSql(AGENT, user.account_id)])
    server = await start()
  }
  const origin = server.origin
  await giveChatKnowledge(origin, key, AGENT)
  await call(origin, 'POST', '/phone-numbers', key, { e164: NUMBER, agent_id: AGENT })
  const latencies = []
  const wall = []
  for (let c = 0; c < CALLS; c++) {
    const utterances = Array.from({ length: UTTERANCES }, (_, i) => QUESTIONS[(c + i) % QUESTIONS.length])
    const t0 = performance.now()
    const { conversation_id: id } = await call(origin, 'POST', '/simulator/inbound-calls', key, {
      to: NUMBER,
      from: `+1415556${String(1000 + c).padStart(4, '0')}`,
      utterances,
    })
    let conv
    for (;;) {
      conv = await call(origin, 'GET', `/conversations/${id}?include=transcript`, key)
      if (conv.status !== 'in_progress') break
      await sleep(20)
    }
    wall.push(performance.now() - t0)
    for (const t of conv.transcript) if (t.turn_type === 'answer' && t.latency_ms !== null) latencies.push(t.latency_ms)
  }
  latencies.sort((a, b) => a - b)
  console.log(
    `engine ${databaseUrl ? 'postgres' : 'pglite'}; ${CALLS} calls × ${UTTERANCES} utterances, one call at a time; local engine, simulated speech`,
  )
  console.log('| figure | turns | p50 ms | p99 ms | max ms | mean call wall s |')
  console.log('|---|---|---|---|---|---|')
  console.log(
    `| end of caller speech → first agent audio frame | ${latencies.length} | ${pct(latencies, 50)} | ${pct(latencies, 99)} | ${latencies[latencies.length - 1]} | ${(wall.reduce((a, b) => a + b, 0) / wall.length / 1000).toFixed(2)} |`,
  )
} finally {
  await server.stop()
  rmSync(dataDir, { recursive: true, force: true })
}
process.exit(0)
