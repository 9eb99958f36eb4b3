// OpenTelemetry tracing (issue 33, decisions "Tracing") on a server of its own whose OTLP/HTTP exporter sends to
// a loopback receiver (test/helpers/otlp-receiver.ts): a chat message sent with a W3C traceparent comes back as
// spans of that trace (the request's server span under the incoming span; claim, engine, the tool, persist
// under it); a simulated call started with a traceparent has its voice turns and their stages in that trace,
// and its live transcription socket (the fake Deepgram) is sent that trace; webhook attempts carry a
// traceparent naming their client span; job runs are spans; then every attribute and span name of the whole
// run is scanned for keys, words, addresses, numbers and query strings. A second server without
// OTEL_EXPORTER_OTLP_ENDPOINT exports nothing and sends no traceparent.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ATTRIBUTE_KEYS } from '~/kit/tracing'
import { createApi } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { startFakeDeepgram, type FakeDeepgram } from '../helpers/fake-deepgram'
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver'
import { startReceiver, type Received, type Receiver } from '../helpers/receiver'
import { ownDatabase, type OwnDatabase } from '../helpers/own-database'
import { startServer, type TestServer } from '../helpers/server'
import { serveBakery, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { sleep, until } from '../helpers/wait'
import { verifies } from '../requirements'

const TO = `+1415559${String(1000 + (process.pid % 8000)).padStart(4, '0')}`
const CALLER = '+14155550166'
const LEAD_TEXT = "Please call me back, I'm Ada, ada.trace@example.com"
const CALL_WORDS = 'How much does a sourdough loaf cost?'
const SERVER = 2
const CLIENT = 3
const CONSUMER = 5

/** A fresh incoming trace context, as an upstream service would send it. */
const incoming = () => {
  const traceId = randomBytes(16).toString('hex')
  const spanId = randomBytes(8).toString('hex')
  return { traceId, spanId, header: `00-${traceId}-${spanId}-01` }
}
const parse = (traceparent: string | undefined) => {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(traceparent ?? '')
  return m ? { traceId: m[1], spanId: m[2] } : null
}

let otlp: OtlpReceiver
let deepgram: FakeDeepgram
let rx: Receiver
let server: TestServer
let site: TestSite
let t: Tenant
let agentId: string

const spansOf = (traceId: string) => otlp.spans.filter((s) => s.traceId === traceId)
const waitForSpans = (what: string, pick: () => ReceivedSpan[] | null, timeoutMs = 20_000) =>
  until(`spans: ${what}`, async () => pick(), timeoutMs)

let own: OwnDatabase

beforeAll(async () => {
  // On PostgreSQL a database of its own: a delivery taken by another file's server (tracing off) would carry
  // no traceparent.
  own = await ownDatabase('tracing')
  otlp = await startOtlpReceiver()
  deepgram = await startFakeDeepgram()
  rx = await startReceiver()
  server = await startServer({
    env: {
      ...own.env,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: '200',
      SVC_STT: 'deepgram',
      DEEPGRAM_BASE_URL: deepgram.url,
      DEEPGRAM_API_KEY: deepgram.key,
      SVC_RATE_LIMITS: 'read=100000,write=100000,build=100000,calls=100000,chat=100000',
    },
  })
  site = await serveBakery('Wombat Bakery', 'Hobart')
  t = await createTenant(createApi(server.base, server.masterKey))
  agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
  const p = await t.api.patch(`/agents/${agentId}`, {
    capabilities: ['capture_lead'],
    capability_settings: { lead_emails: ['sales.trace@example.com'] },
  })
  expect(p.status, p.text).toBe(200)
  expect((await t.api.post('/phone-numbers', { e164: TO, agent_id: agentId })).status).toBe(201)
}, 180_000)

afterAll(async () => {
  await server?.stop()
  await own?.drop()
  await otlp?.close()
  await deepgram?.close()
  await rx?.close()
  await site?.close()
})

describe('tracing on (OTEL_EXPORTER_OTLP_ENDPOINT set)', () => {
  it('continues an incoming traceparent through a chat turn: claim, engine, the tool, persist', async () => {
    verifies('ops.tracing.request-span', 'ops.tracing.chat-turn')
    const conv = await t.api.post('/conversations', { agent_id: agentId })
    expect(conv.status, conv.text).toBe(201)
    const id = conv.body.conversation_id
    const up = incoming()
    const r = await t.api.post(
      `/conversations/${id}/messages`,
      { text: LEAD_TEXT },
      { headers: { traceparent: up.header } },
    )
    expect(r.status, r.text).toBe(200)
    // The tool really ran in this turn.
    expect(r.body.turns.find((x: any) => x.turn_type === 'tool')).toBeTruthy()

    const spans = await waitForSpans('the chat turn', () => {
      const s = spansOf(up.traceId)
      return ['chat.claim', 'chat.engine', 'chat.tool', 'chat.persist'].every((n) => s.some((x) => x.name === n)) &&
        s.some((x) => x.kind === SERVER)
        ? s
        : null
    })
    const server_ = spans.find((s) => s.kind === SERVER)!
    expect(server_).toMatchObject({
      name: 'POST /v1/conversations/:conv/messages',
      parentSpanId: up.spanId,
      attributes: {
        'http.request.method': 'POST',
        'http.route': '/v1/conversations/:conv/messages',
        'http.response.status_code': 200,
      },
    })
    expect(server_.resource['service.name']).toBe('svc')
    const byName = (n: string) => spans.filter((s) => s.name === n)
    for (const n of ['chat.claim', 'chat.engine', 'chat.persist']) {
      expect(byName(n), n).toHaveLength(1)
      expect(byName(n)[0].parentSpanId, n).toBe(server_.spanId)
      expect(byName(n)[0].startMs).toBeGreaterThanOrEqual(server_.startMs)
      expect(byName(n)[0].endMs).toBeLessThanOrEqual(server_.endMs + 1)
    }
    const engine = byName('chat.engine')[0]
    expect(engine.attributes).toMatchObject({ 'svc.conversation.id': id, 'svc.turn.tool_calls': 1 })
    const [tool] = byName('chat.tool')
    expect(tool).toMatchObject({
      parentSpanId: engine.spanId,
      attributes: { 'svc.tool.name': 'capture_lead', 'svc.tool.ok': true },
    })
    // The order of the turn: claim, then the engine, then the write.
    expect(byName('chat.claim')[0].endMs).toBeLessThanOrEqual(engine.startMs + 1)
    expect(engine.endMs).toBeLessThanOrEqual(byName('chat.persist')[0].startMs + 1)

    // A request without traceparent starts a trace of its own; a 404 has no route template in its name.
    await t.api.get(`/conversations/${id}`)
    const missing = await t.api.get('/no-such-route?x=1')
    expect(missing.status).toBe(404)
    await waitForSpans('a read and a 404', () => {
      const read = otlp.spans.find((s) => s.name === 'GET /v1/conversations/:conv')
      const none = otlp.spans.find((s) => s.kind === SERVER && s.attributes['http.response.status_code'] === 404)
      if (!read || !none) return null
      expect(read.parentSpanId).toBe('')
      expect(none.name).toBe('GET')
      return [read, none]
    })
    // The fallback base path /api/v1 re-dispatches to the /v1 route: named by the /v1 template.
    const again = incoming()
    const viaApi = await fetch(`${server.origin}/api/v1/conversations/${id}`, {
      headers: { authorization: `Bearer ${t.key}`, traceparent: again.header },
    })
    expect(viaApi.status).toBe(200)
    const [fallback] = await waitForSpans('the /api/v1 read', () => {
      const s = spansOf(again.traceId).filter((x) => x.kind === SERVER)
      return s.length ? s : null
    })
    expect(fallback).toMatchObject({
      name: 'GET /v1/conversations/:conv',
      attributes: { 'http.route': '/v1/conversations/:conv' },
    })
  })

  it("puts a simulated call's voice turn and its stages in the trace of the request that started it", async () => {
    verifies('ops.tracing.voice-stages')
    const up = incoming()
    const before = Date.now()
    const started = await t.api.post(
      '/simulator/inbound-calls',
      { to: TO, from: CALLER, utterances: [CALL_WORDS] },
      { headers: { traceparent: up.header } },
    )
    expect(started.status, started.text).toBe(202)
    const id = started.body.conversation_id
    await until(
      `conversation ${id} to complete`,
      async () => {
        const r = await t.api.get(`/conversations/${id}`)
        return r.body.status === 'completed' ? r.body : null
      },
      120_000,
    )
    const stages = ['voice.endpoint', 'voice.stt', 'voice.llm_first_token', 'voice.tts_first_byte', 'voice.first_audio']
    const spans = await waitForSpans('the voice turn', () => {
      const s = spansOf(up.traceId)
      return s.some((x) => x.name === 'voice.turn') && stages.every((n) => s.some((x) => x.name === n)) ? s : null
    })
    const request = spans.find((s) => s.name === 'POST /v1/simulator/inbound-calls')!
    expect(request).toMatchObject({ kind: SERVER, parentSpanId: up.spanId })
    const turns = spans.filter((s) => s.name === 'voice.turn')
    expect(turns).toHaveLength(1)
    const [turn] = turns
    expect(turn.attributes).toMatchObject({ 'svc.conversation.id': id, 'svc.channel': 'phone_inbound' })
    // Wall-clock times: within the test's run, the turn lasting its latency_ms.
    expect(turn.startMs).toBeGreaterThanOrEqual(before - 1000)
    expect(turn.endMs).toBeLessThanOrEqual(Date.now())
    const latency = turn.attributes['svc.voice.latency_ms'] as number
    expect(Math.abs(turn.endMs - turn.startMs - latency)).toBeLessThanOrEqual(2)
    for (const n of stages) {
      const stage = spans.filter((s) => s.name === n)
      expect(stage, n).toHaveLength(1)
      expect(stage[0].parentSpanId, n).toBe(turn.spanId)
      expect(stage[0].attributes['svc.voice.stage']).toBe(n.slice('voice.'.length))
      expect(stage[0].startMs, n).toBeGreaterThanOrEqual(turn.startMs - 1)
      expect(stage[0].endMs, n).toBeLessThanOrEqual(turn.endMs + 1)
      expect(stage[0].endMs, n).toBeGreaterThanOrEqual(stage[0].startMs)
    }
    // The stages follow one another: end of speech, transcription, then the answer's first token and audio.
    const at = (n: string) => spans.find((s) => s.name === n)!
    expect(at('voice.stt').startMs).toBeGreaterThanOrEqual(at('voice.endpoint').endMs - 1)
    expect(at('voice.llm_first_token').startMs).toBeGreaterThanOrEqual(at('voice.stt').endMs - 1)
    expect(at('voice.first_audio').startMs).toBeGreaterThanOrEqual(at('voice.tts_first_byte').endMs - 1)

    // The speech provider's live socket was opened in the call's trace.
    const socket = deepgram.requests.filter((r) => r.upgrade).at(-1)
    expect(parse(socket?.traceparent)?.traceId).toBe(up.traceId)
  }, 180_000)

  it('sends a traceparent with every webhook attempt, naming its client span', async () => {
    verifies('ops.tracing.webhook-traceparent')
    // A test delivery, made inside the request: it continues the request's trace.
    const ep = await t.api.post('/webhooks/endpoints', {
      url: rx.url('/hooks'),
      events: ['conversation.started'],
    })
    expect(ep.status, ep.text).toBe(201)
    const up = incoming()
    const ping = await t.api.post(`/webhooks/endpoints/${ep.body.endpoint_id}/test`, undefined, {
      headers: { traceparent: up.header },
    })
    expect(ping.status, ping.text).toBe(200)
    const pinged = rx.at('/hooks').find((r) => r.json?.type !== 'conversation.started')!
    const sent = parse(pinged.headers.traceparent as string)
    expect(sent?.traceId).toBe(up.traceId)
    const [attempt] = await waitForSpans('the test delivery', () => {
      const s = otlp.spans.filter((x) => x.spanId === sent!.spanId)
      return s.length ? s : null
    })
    const request = otlp.spans.find((s) => s.traceId === up.traceId && s.kind === SERVER)!
    expect(request.name).toBe('POST /v1/webhooks/endpoints/:whk/test')
    expect(attempt).toMatchObject({
      kind: CLIENT,
      traceId: up.traceId,
      parentSpanId: request.spanId,
      attributes: { 'svc.webhook.event': pinged.json.type, 'http.response.status_code': 200 },
    })

    // A delivery of the pump (an event of a new conversation) carries a traceparent of its own attempt span.
    await t.api.post('/conversations', { agent_id: agentId })
    const started = (r: Received) => r.path === '/hooks' && r.json?.type === 'conversation.started'
    await rx.waitFor((all) => all.some(started), 'the conversation.started delivery', 30_000)
    const event = rx.received.find(started)!
    const pumped = parse(event.headers.traceparent as string)
    expect(pumped).not.toBeNull()
    const [span] = await waitForSpans('the pumped delivery', () => {
      const s = otlp.spans.filter((x) => x.spanId === pumped!.spanId && x.traceId === pumped!.traceId)
      return s.length ? s : null
    })
    expect(span).toMatchObject({ name: 'webhook conversation.started', kind: CLIENT })
  })

  it('traces job runs as consumer spans named by their queue', async () => {
    verifies('ops.tracing.jobs')
    // The agent's build ran as jobs before the tests; the call's summary after the call.
    const jobs = await waitForSpans('job runs', () => {
      const s = otlp.spans.filter((x) => x.name.startsWith('job '))
      return s.length ? s : null
    })
    for (const j of jobs) {
      expect(j.kind).toBe(CONSUMER)
      expect(j.name).toBe(`job ${j.attributes['svc.job.queue']}`)
      expect(j.attributes['svc.job.retry']).toEqual(expect.any(Number))
    }
  })

  it('puts no key, words, address, number or query string on any span of the run', async () => {
    verifies('ops.tracing.no-pii')
    // Let the last batches (the summary jobs, the call's end) arrive.
    await sleep(1500)
    // The scan covers the whole run: requests, the chat turn and its tool, the call, webhooks and jobs.
    const names = new Set(otlp.spans.map((s) => s.name))
    for (const n of [
      'POST /v1/conversations/:conv/messages',
      'chat.tool',
      'voice.stt',
      'webhook ping',
      'job agent.build',
    ])
      expect(names.has(n), n).toBe(true)
    const forbidden = [
      t.key,
      t.password,
      t.email,
      server.masterKey,
      deepgram.key,
      LEAD_TEXT,
      'ada.trace@example.com',
      'sales.trace@example.com',
      CALL_WORDS,
      'sourdough',
      CALLER,
      CALLER.slice(1),
      TO,
      TO.slice(1),
      site.origin,
      rx.origin,
      deepgram.url,
    ]
    const seen = new Set<string>()
    for (const s of otlp.spans) {
      const values = [s.name, ...Object.values(s.attributes).map(String)]
      for (const [k] of Object.entries(s.attributes)) seen.add(k)
      for (const v of values) {
        for (const f of forbidden) expect(v.includes(f), `${s.name}: "${v}" contains "${f}"`).toBe(false)
        expect(v, s.name).not.toMatch(/[?@]|https?:\/\/|Bearer|svc_(sk|mk|pk)_/)
      }
    }
    for (const k of seen) expect(ATTRIBUTE_KEYS.has(k), k).toBe(true)
  })
})

describe('tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  let off: TestServer
  let quiet: OtlpReceiver
  afterAll(async () => {
    await off?.stop()
    await quiet?.close()
  })

  it('exports nothing and sends no traceparent', async () => {
    verifies('ops.tracing.off-by-default')
    quiet = await startOtlpReceiver()
    // The per-signal variable alone would be enough for an exporter that was loaded: tracing stays off.
    off = await startServer({
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${quiet.url}/v1/traces`, OTEL_BSP_SCHEDULE_DELAY: '200' },
    })
    const tenant = await createTenant(createApi(off.base, off.masterKey))
    const ep = await tenant.api.post('/webhooks/endpoints', { url: rx.url('/off'), events: ['summary.ready'] })
    expect(ep.status, ep.text).toBe(201)
    const ping = await tenant.api.post(`/webhooks/endpoints/${ep.body.endpoint_id}/test`, undefined, {
      headers: { traceparent: incoming().header },
    })
    expect(ping.status, ping.text).toBe(200)
    const [got] = rx.at('/off')
    expect(got.headers.traceparent).toBeUndefined()
    await sleep(1000)
    expect(quiet.posts).toBe(0)
  })
})
