#!/usr/bin/env node
// Voice turn latency: from the end of the caller's speech to the first frame of the agent's answer.
//
// Default (instant) mode, on the simulated network: the last voiced audio frame the session received → the
// first answer frame sent back, with the local engine and simulated speech, so it is the server's own path
// only. BENCH_CALLS calls (default 10) of BENCH_UTTERANCES utterances (default 5) each, one call at a time,
// so the figure is one turn's path, not a queue. Each answer turn stores that latency as latency_ms; the
// script reads them back over HTTP and prints p50/p99. The simulated caller runs faster than real time.
//
// --realtime (`npm run bench:voice -- --realtime`): what a caller waits for on a phone call. The server runs
// with SVC_TELEPHONY=twilio, SVC_CHAT_ENGINE=openai and SVC_SPEECH=openai against local fakes
// (bench/_voice-fakes.mjs). Real-paced: the callers (bench/_twilio-caller.mjs) ring the number through the
// signed voice webhook and speak Twilio's Media Streams protocol on the wall clock, a 20 ms μ-law frame every
// 20 ms (silence when not talking); each question is ~2 s of voiced audio, and the figure is measured at the
// caller, from its last voiced frame to the first media message of the answer. Not real: the agent's audio
// plays instantly on the caller's side (marks are echoed on arrival, so a 16-turn call lasts its questions
// and waits, not also 16 answers of 14 s), and the providers are fakes with modelled latencies:
// BENCH_STT_MS (250) for a whole transcription, BENCH_LLM_FIRST_MS (400) to the first token then
// BENCH_LLM_TPS (40) tokens a second, BENCH_TTS_FIRST_MS (200) to the first byte then audio at
// BENCH_TTS_SPEED (5)× real time. BENCH_CALLS parallel calls (default 1) of BENCH_TURNS questions (default
// 16), all at once; BENCH_EOS_MS (500) is asked of the agent as end_of_speech_ms; BENCH_JSON=<path> also
// writes the figures as JSON. The server's CPU is read from /proc during the calls, and idle for BENCH_IDLE_S
// (10; 0 skips it) before them. The floor is what a fully streaming loop could reach under that model: end
// of speech + STT + first token + the first sentence's tokens / TPS + TTS first byte.
//
// Run `npx nitropack build` first; this script builds nothing. DATABASE_URL set: that PostgreSQL database
// (migrated by the server); otherwise a fresh embedded PGlite data dir. Figures only, no asserts.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { entry, sleep, startBuiltServer } from './_server.mjs'
import { call, chatAgentSql, execSqlBeside, giveChatKnowledge } from './_fixtures.mjs'
import {
  ANSWERS,
  firstSentenceTokens,
  latencyModel,
  startFakeChat,
  startFakeSpeech,
  startFakeTwilioRest,
  tokensOf,
} from './_voice-fakes.mjs'
import { placeCall } from './_twilio-caller.mjs'

const databaseUrl = process.env.DATABASE_URL
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

const pct = (sorted, p) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN

async function instant() {
  const CALLS = Number(process.env.BENCH_CALLS ?? 10)
  const UTTERANCES = Number(process.env.BENCH_UTTERANCES ?? 5)
  const AGENT = `agt_${900_000_000 + Math.floor(Math.random() * 99_999_999)}`
  const NUMBER = `+1415555${String(1000 + Math.floor(Math.random() * 8999))}`
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
    server = await execSqlBeside(server, start, { databaseUrl, dataDir }, [chatAgentSql(AGENT, user.account_id)])
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
      for (const t of conv.transcript)
        if (t.turn_type === 'answer' && t.latency_ms !== null) latencies.push(t.latency_ms)
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
}

// ---- --realtime ---------------------------------------------------------------------------------------------

/** The server's end of speech before agents could set it (session.ts ENDPOINT_MS). */
const FIXED_EOS_MS = 600

function intEnv(name, fallback, min = 1) {
  const raw = process.env[name]
  const n = raw === undefined || raw === '' ? fallback : Number(raw)
  if (!Number.isInteger(n) || n < min) throw new Error(`${name}=${raw}: expected an integer ≥ ${min}`)
  return n
}

const freePort = () =>
  new Promise((ok, fail) => {
    const s = createServer()
    s.once('error', fail)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => ok(port))
    })
  })

/** CPU seconds (user + system) a process has used so far, from /proc; null where there is no /proc. */
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    // utime and stime, fields 14 and 15 of stat(5), in clock ticks (USER_HZ, 100 on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return null
  }
}

const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN)
const sid = (prefix) => prefix + randomBytes(16).toString('hex')

/** An account with the bench agent and its number: as many as the calls need lines. */
async function makeTenant(origin, masterKey, i) {
  const user = await call(origin, 'POST', '/users', masterKey, {
    email: `bench-voice-rt-${Date.now()}-${i}@example.com`,
  })
  const cred = await call(origin, 'POST', `/users/${user.user_id}/credentials`, masterKey, {
    name: 'bench',
    scopes: ['conversations:read', 'conversations:write', 'kb:read', 'kb:write', 'agents:read', 'agents:write'],
  })
  return {
    accountId: user.account_id,
    key: cred.secret,
    agentId: `agt_${900_000_000 + Math.floor(Math.random() * 99_999_999)}`,
    number: null,
  }
}

/** A number no account holds yet (a PostgreSQL database keeps the numbers of earlier runs). */
async function holdNumber(origin, t) {
  for (let attempt = 0; ; attempt++) {
    const e164 = `+1415555${String(1000 + Math.floor(Math.random() * 8999))}`
    try {
      await call(origin, 'POST', '/phone-numbers', t.key, { e164, agent_id: t.agentId })
      t.number = e164
      return
    } catch (e) {
      if (attempt >= 10 || !String(e.message).includes('number_taken')) throw e
    }
  }
}

/** PATCH end_of_speech_ms; the code before it existed answers 400 unsupported_field. Answers the one in force. */
async function setEndOfSpeech(origin, t, ms) {
  const r = await fetch(`${origin}/v1/agents/${t.agentId}/voice`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ end_of_speech_ms: ms }),
  })
  const body = await r.json().catch(() => null)
  if (r.ok) return { applied: ms, supported: true }
  if (r.status === 400 && body?.error?.code === 'unsupported_field') return { applied: FIXED_EOS_MS, supported: false }
  throw new Error(`PATCH /agents/${t.agentId}/voice end_of_speech_ms=${ms}: ${r.status} ${JSON.stringify(body)}`)
}

async function finishedConversation(origin, key, id) {
  const deadline = performance.now() + 60_000
  for (;;) {
    const conv = await call(origin, 'GET', `/conversations/${id}?include=transcript`, key)
    if (conv.status !== 'in_progress') return conv
    if (performance.now() > deadline)
      throw new Error(`conversation ${id} still in progress 60 s after its caller hung up`)
    await sleep(100)
  }
}

async function realtime() {
  const model = latencyModel()
  const CALLS = intEnv('BENCH_CALLS', 1)
  const TURNS = intEnv('BENCH_TURNS', 16)
  const EOS_MS = intEnv('BENCH_EOS_MS', 500)
  const IDLE_S = intEnv('BENCH_IDLE_S', 10, 0)
  const jsonPath = process.env.BENCH_JSON
  const engine = databaseUrl ? 'postgres' : 'pglite'

  const chat = await startFakeChat(model)
  const speech = await startFakeSpeech(model)
  const twilio = await startFakeTwilioRest()
  const port = await freePort()
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-voice-rt-'))
  const masterKey = 'svc_mk_live_' + randomBytes(36).toString('base64url')
  const secret = randomBytes(32).toString('base64url')
  // Twilio signs the exact URL it calls and the TwiML names the media URL from it: both need a fixed origin.
  const origin = `http://127.0.0.1:${port}`
  const start = () =>
    startBuiltServer({
      dataDir,
      env: {
        PORT: String(port),
        SVC_PUBLIC_URL: origin,
        SVC_MASTER_KEY: masterKey,
        SVC_SECRET: secret,
        SVC_TELEPHONY: 'twilio',
        TWILIO_ACCOUNT_SID: twilio.accountSid,
        TWILIO_AUTH_TOKEN: twilio.authToken,
        TWILIO_API_BASE_URL: twilio.url,
        SVC_CHAT_ENGINE: 'openai',
        OPENAI_BASE_URL: chat.url,
        OPENAI_API_KEY: 'sk-bench-chat',
        SVC_SPEECH: 'openai',
        SPEECH_BASE_URL: speech.url,
        SPEECH_API_KEY: 'sk-bench-speech',
        SVC_RATE_LIMITS: 'read=100000000,write=100000000,calls=100000000,chat=100000000',
      },
    })

  let server = null
  try {
    server = await start()
    // An account has max_concurrent_calls lines (5, fixed): parallel calls beyond that need more accounts, each
    // with the same agent set-up and its own number. The server's work per call is the same.
    const first = await makeTenant(origin, masterKey, 0)
    const { max_concurrent_calls: lines } = await call(origin, 'GET', `/accounts/${first.accountId}/limits`, masterKey)
    if (!(lines >= 1))
      throw new Error(`account ${first.accountId} has max_concurrent_calls ${lines}: no call can connect`)
    const tenants = [first]
    while (tenants.length * lines < CALLS) tenants.push(await makeTenant(origin, masterKey, tenants.length))
    const agentRows = tenants.map((t) => chatAgentSql(t.agentId, t.accountId))
    server = await execSqlBeside(server, start, { databaseUrl, dataDir }, agentRows)
    let eos = null
    for (const t of tenants) {
      await giveChatKnowledge(origin, t.key, t.agentId)
      await holdNumber(origin, t)
      eos = await setEndOfSpeech(origin, t, EOS_MS)
    }

    const firstTokens = mean(ANSWERS.map(firstSentenceTokens))
    const answerWords = mean(ANSWERS.map((a) => tokensOf(a).length))
    const floorParts = {
      end_of_speech_ms: eos.applied,
      stt_ms: model.sttMs,
      llm_first_token_ms: model.llmFirstMs,
      first_sentence_ms: (firstTokens / model.llmTps) * 1000,
      tts_first_byte_ms: model.ttsFirstMs,
    }
    const floor = Math.round(Object.values(floorParts).reduce((a, b) => a + b, 0))

    // The server's background work (pg-boss polling, config polls) is not the calls': measured alone first.
    let idleCpu = null
    if (IDLE_S > 0) {
      await sleep(1000)
      const before = cpuSeconds(server.pid)
      await sleep(IDLE_S * 1000)
      const after = cpuSeconds(server.pid)
      if (before !== null && after !== null) idleCpu = (after - before) / IDLE_S
    }
    const cpu0 = cpuSeconds(server.pid)
    const benchCpu0 = process.cpuUsage()
    const t0 = performance.now()
    const settled = await Promise.allSettled(
      Array.from({ length: CALLS }, (_, c) => {
        const t = tenants[Math.floor(c / lines)]
        return placeCall({
          origin,
          accountSid: twilio.accountSid,
          authToken: twilio.authToken,
          callSid: sid('CA'),
          from: `+1415556${String(1000 + c).padStart(4, '0')}`,
          to: t.number,
          questions: Array.from({ length: TURNS }, (_, i) => QUESTIONS[(c + i) % QUESTIONS.length]),
          onSay: speech.heard,
        }).then((r) => ({ ...r, tenant: t }))
      }),
    )
    const wallS = (performance.now() - t0) / 1000
    const cpu1 = cpuSeconds(server.pid)
    const benchCpu = process.cpuUsage(benchCpu0)
    const failed = settled.filter((s) => s.status === 'rejected')
    if (failed.length) {
      for (const f of failed) console.error(`call failed: ${f.reason?.message ?? f.reason}`)
      throw new Error(`${failed.length} of ${CALLS} calls failed`)
    }
    const calls = settled.map((s) => s.value)

    const caller = calls.flatMap((c) => c.turns.map((t) => Math.round(t.latencyMs))).sort((a, b) => a - b)
    const stored = []
    const breakdown = { endpoint_ms: [], stt_ms: [], llm_first_token_ms: [], tts_first_byte_ms: [] }
    for (const c of calls) {
      const conv = await finishedConversation(origin, c.tenant.key, c.conversationId)
      for (const turn of conv.transcript ?? []) {
        if (turn.turn_type !== 'answer' || typeof turn.latency_ms !== 'number') continue
        stored.push(turn.latency_ms)
        for (const k of Object.keys(breakdown))
          if (typeof turn.latency_breakdown?.[k] === 'number') breakdown[k].push(turn.latency_breakdown[k])
      }
    }
    stored.sort((a, b) => a - b)
    const avg = (xs) => (xs.length ? Math.round(mean(xs)) : null)
    const totals = (k) => calls.reduce((n, c) => n + c.stats[k], 0)
    const p50 = pct(caller, 50)
    const figures = {
      mode: 'realtime',
      engine,
      calls: CALLS,
      turns_per_call: TURNS,
      accounts: tenants.length,
      model: {
        stt_ms: model.sttMs,
        llm_first_token_ms: model.llmFirstMs,
        llm_tokens_per_s: model.llmTps,
        tts_first_byte_ms: model.ttsFirstMs,
        tts_speed: model.ttsSpeed,
        answer_tokens_mean: answerWords,
        first_sentence_tokens_mean: firstTokens,
      },
      end_of_speech: { requested_ms: EOS_MS, applied_ms: eos.applied, supported: eos.supported },
      floor_ms: floor,
      floor_parts: floorParts,
      caller: {
        turns: caller.length,
        p50_ms: p50,
        p90_ms: pct(caller, 90),
        max_ms: caller[caller.length - 1],
        all_ms: caller,
      },
      p50_over_floor: Number((p50 / floor).toFixed(2)),
      stored: {
        turns: stored.length,
        latency_ms_p50: pct(stored, 50),
        latency_breakdown_avg: Object.fromEntries(Object.entries(breakdown).map(([k, xs]) => [k, avg(xs)])),
      },
      wall_s: Number(wallS.toFixed(1)),
      server_cpu_s: cpu0 !== null && cpu1 !== null ? Number((cpu1 - cpu0).toFixed(2)) : null,
      server_idle_cpu_share: idleCpu === null ? null : Number(idleCpu.toFixed(3)),
      bench_cpu_s: Number(((benchCpu.user + benchCpu.system) / 1e6).toFixed(2)),
      caller_line: { late_frames: totals('lateFrames'), max_late_ms: Math.max(...calls.map((c) => c.stats.maxLateMs)) },
      stream: {
        media_received: totals('media'),
        marks_echoed: totals('marks'),
        clears: totals('clears'),
        media_while_caller_talked: totals('talkedOver'),
        silent_first_frames: totals('silentFirstFrames'),
      },
      providers: {
        chat_requests: chat.stats.requests,
        chat_streamed: chat.stats.streamed,
        transcriptions: speech.stats.transcriptions,
        syntheses: speech.stats.syntheses,
        synthesis_formats: speech.stats.formats,
        twilio_rest_requests: twilio.requests.length,
      },
    }

    const f = figures
    const ms = (x) => (x === null || Number.isNaN(x) ? 'n/a' : String(Math.round(x)))
    console.log(
      `engine ${engine}; ${CALLS} parallel call${CALLS === 1 ? '' : 's'} × ${TURNS} turns` +
        (tenants.length > 1 ? ` (${tenants.length} accounts: ${lines} lines each)` : '') +
        '; Twilio Media Streams caller paced in real time (20 ms μ-law frames), agent playback instant (marks echoed on arrival)',
    )
    console.log(
      `latency model: STT ${model.sttMs} ms; LLM first token ${model.llmFirstMs} ms then ${model.llmTps} tokens/s; ` +
        `TTS first byte ${model.ttsFirstMs} ms then ${model.ttsSpeed}× real time; answers of ${answerWords.toFixed(1)} tokens, first sentence ${firstTokens.toFixed(1)}`,
    )
    console.log(
      eos.supported
        ? `end of speech: ${eos.applied} ms (end_of_speech_ms set on the agent)`
        : `end of speech: the server's fixed ${FIXED_EOS_MS} ms (PATCH /v1/agents/{agt}/voice end_of_speech_ms=${EOS_MS} answered 400 unsupported_field)`,
    )
    console.log(
      `floor = end of speech ${eos.applied} + STT ${model.sttMs} + LLM first token ${model.llmFirstMs} + ` +
        `first sentence ${firstTokens.toFixed(1)} tokens / ${model.llmTps} tokens/s ${ms(floorParts.first_sentence_ms)} + TTS first byte ${model.ttsFirstMs} = ${floor} ms`,
    )
    console.log('')
    console.log('| figure | turns | p50 ms | p90 ms | max ms | floor ms | p50/floor |')
    console.log('|---|---|---|---|---|---|---|')
    console.log(
      `| end of caller speech → first agent audio, at the caller | ${f.caller.turns} | ${ms(f.caller.p50_ms)} | ${ms(f.caller.p90_ms)} | ${ms(f.caller.max_ms)} | ${floor} | ${f.p50_over_floor.toFixed(2)} |`,
    )
    console.log('')
    const b = f.stored.latency_breakdown_avg
    console.log(
      '| stored on the answer turns | turns | latency_ms p50 | endpoint_ms avg | stt_ms avg | llm_first_token_ms avg | tts_first_byte_ms avg |',
    )
    console.log('|---|---|---|---|---|---|---|')
    console.log(
      `| GET /v1/conversations/{id}?include=transcript | ${f.stored.turns} | ${ms(f.stored.latency_ms_p50)} | ${ms(b.endpoint_ms)} | ${ms(b.stt_ms)} | ${ms(b.llm_first_token_ms)} | ${ms(b.tts_first_byte_ms)} |`,
    )
    console.log('')
    const cpu =
      f.server_cpu_s === null
        ? 'n/a'
        : `${f.server_cpu_s} s (${((f.server_cpu_s / wallS) * 100).toFixed(1)}% of one core; idle ${idleCpu === null ? 'n/a' : `${(idleCpu * 100).toFixed(1)}%`})`
    console.log(
      `calls took ${f.wall_s} s; server CPU ${cpu}; bench CPU ${f.bench_cpu_s} s; caller line: ${f.caller_line.late_frames} late ticks (max ${f.caller_line.max_late_ms} ms late)`,
    )
    console.log(
      `stream: ${f.stream.media_received} media received, ${f.stream.marks_echoed} marks echoed, ${f.stream.clears} clears, ${f.stream.media_while_caller_talked} media while the caller talked, ${f.stream.silent_first_frames} answers opening with a silent frame; ` +
        `providers: ${f.providers.chat_requests} chat requests (${f.providers.chat_streamed} streamed), ${f.providers.transcriptions} transcriptions, ` +
        `${f.providers.syntheses} syntheses ${JSON.stringify(f.providers.synthesis_formats)}, ${f.providers.twilio_rest_requests} Twilio REST requests`,
    )
    if (jsonPath) {
      writeFileSync(jsonPath, JSON.stringify(figures, null, 2) + '\n')
      console.log(`figures written to ${jsonPath}`)
    }
  } finally {
    await server?.stop()
    await Promise.all([chat.close(), speech.close(), twilio.close()])
    rmSync(dataDir, { recursive: true, force: true })
  }
}

// Last: the helpers above are consts, initialised only once the module has run down to here.
if (process.argv.slice(2).includes('--realtime')) await realtime()
else await instant()
process.exit(0)
