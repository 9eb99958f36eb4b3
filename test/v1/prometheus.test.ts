// GET /metrics on a server of its own (SVC_METRICS_TOKEN set), read with a Prometheus text parser as a
// scraper would: who may scrape (the master key, the metrics token; 401 otherwise, even for a valid API
// key), the named series with route templates as labels and never a raw path or an id, and the series
// that the work behind them moves: a chat turn, a simulated phone call's voice stages, jobs, a webhook
// delivery, the live calls and the database pool.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApi } from '../helpers/api'
import { seedAgent } from '../helpers/agents'
import { freshNumber } from '../helpers/phone'
import { family, parseExposition, type Family } from '../helpers/prometheus'
import { startReceiver, type Receiver } from '../helpers/receiver'
import { ownDatabase, type OwnDatabase } from '../helpers/own-database'
import { startServer, type TestServer } from '../helpers/server'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

const TOKEN = `mt_${randomBytes(24).toString('hex')}`
// A database of its own on PostgreSQL: another file's server on the shared database would otherwise take this
// file's webhook delivery (and its series would not move here).
let own: OwnDatabase
let env: Record<string, string> = { SVC_METRICS_TOKEN: TOKEN }
let server: TestServer
let t: Tenant
let chatAgent: string
let phoneAgent: string
let rx: Receiver

const origin = () => new URL(server.base).origin
const scrapeWith = (authorization?: string) =>
  fetch(`${origin()}/metrics`, { headers: authorization ? { authorization } : {} })
async function scrape(): Promise<{ text: string; families: Family[] }> {
  const r = await scrapeWith(`Bearer ${TOKEN}`)
  expect(r.status).toBe(200)
  const text = await r.text()
  return { text, families: parseExposition(text) }
}
const samples = (families: Family[], name: string) => family(families, name)?.metrics ?? []
const countOf = (families: Family[], name: string, labels: Record<string, string>) =>
  samples(families, name)
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v))
    .reduce((n, s) => n + Number(s.count ?? s.value ?? 0), 0)

beforeAll(async () => {
  own = await ownDatabase('prometheus')
  env = { ...env, ...own.env }
  rx = await startReceiver()
  server = await startServer({ env })
  t = await createTenant(createApi(server.base, server.masterKey))
  const seeded = await seedAgent(
    server,
    [
      { accountId: t.accountId, name: 'Chat' },
      { accountId: t.accountId, name: 'Phone', agentType: 'phone' },
    ],
    env,
  )
  server = seeded.server
  ;[chatAgent, phoneAgent] = seeded.ids
}, 90_000)
afterAll(async () => {
  await server?.stop('SIGKILL')
  await own?.drop()
  await rx?.close()
})

describe('GET /metrics', () => {
  it('answers 401 without a credential, with a wrong one and with a tenant API key; 200 for the token and the master key', async () => {
    verifies('ops.metrics.auth')
    const none = await scrapeWith()
    expect(none.status).toBe(401)
    expect((await none.json()).error.code).toBe('missing_credentials')
    for (const bad of [`Bearer ${TOKEN}x`, `Bearer ${t.key}`, `Bearer svc_mk_live_${'x'.repeat(48)}`]) {
      const r = await scrapeWith(bad)
      expect(r.status, bad.slice(0, 20)).toBe(401)
      expect((await r.json()).error.code).toBe('invalid_credentials')
    }
    for (const good of [TOKEN, server.masterKey]) {
      const r = await scrapeWith(`Bearer ${good}`)
      expect(r.status).toBe(200)
      expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
      // The scrape credential reads nothing else.
      if (good === TOKEN) expect((await createApi(server.base, TOKEN).get('/conversations')).status).toBe(401)
      expect(await r.text()).not.toContain(good)
    }
  })

  it('counts each request under its route template, never a raw path or an id; /api/v1 under /v1', async () => {
    verifies('ops.metrics.series')
    const api = createApi(server.base, t.key)
    const c = await api.post('/conversations', { agent_id: chatAgent })
    expect(c.status, c.text).toBe(201)
    const conv = c.body.conversation_id as string
    expect((await api.get(`/conversations/${conv}`)).status).toBe(200)
    expect((await api.get('/conversations/conv_u999999999')).status).toBe(404)
    const alias = await fetch(`${origin()}/api/v1/conversations/${conv}`, {
      headers: { authorization: `Bearer ${t.key}` },
    })
    expect(alias.status).toBe(200)
    expect((await fetch(`${origin()}/v1/no/such/${conv}`)).status).toBe(404)
    const { text, families } = await scrape()
    for (const name of [
      'svc_http_requests_total',
      'svc_http_request_duration_seconds',
      'svc_chat_turn_duration_seconds',
      'svc_voice_turn_latency_seconds',
      'svc_jobs_total',
      'svc_webhook_deliveries_total',
      'svc_calls_active',
      'svc_db_pool_connections',
      'process_cpu_user_seconds_total',
      'nodejs_eventloop_lag_p99_seconds',
    ])
      expect(family(families, name), name).toBeDefined()
    expect(family(families, 'svc_http_request_duration_seconds')!.type).toBe('HISTOGRAM')
    // The dashboard in ops/ reads only series this server exposes (its own test checks them against the spec).
    const dashboard = readFileSync(new URL('../../ops/grafana/svc-overview.json', import.meta.url), 'utf8')
    const used = new Set([...dashboard.matchAll(/\b(svc_[a-z_]+?)(?:_bucket|_count|_sum)?\b/g)].map((m) => m[1]))
    expect(used.size).toBeGreaterThanOrEqual(8)
    for (const name of used) expect(family(families, name), `dashboard series ${name}`).toBeDefined()
    const route = '/v1/conversations/:conv'
    // Two 200s (one through the alias) and one 404, all under the template.
    expect(
      countOf(families, 'svc_http_requests_total', { method: 'GET', route, status: '200' }),
    ).toBeGreaterThanOrEqual(2)
    expect(
      countOf(families, 'svc_http_requests_total', { method: 'GET', route, status: '404' }),
    ).toBeGreaterThanOrEqual(1)
    expect(countOf(families, 'svc_http_request_duration_seconds', { method: 'GET', route })).toBeGreaterThanOrEqual(3)
    expect(
      countOf(families, 'svc_http_requests_total', { method: 'POST', route: '/v1/conversations', status: '201' }),
    ).toBe(1)
    expect(
      countOf(families, 'svc_http_requests_total', { route: '(unmatched)', status: '404' }),
    ).toBeGreaterThanOrEqual(1)
    // No label anywhere carries an id, a tenant or a raw path.
    for (const id of [conv, t.accountId, 'conv_u999999999', '/v1/no/such', '/api/v1/']) expect(text).not.toContain(id)
    const routes = new Set(samples(families, 'svc_http_requests_total').map((s) => s.labels?.route))
    for (const r of routes) expect(r, r).toMatch(/^(\/[\w.\-:*]*)+$|^\(unmatched\)$/)
  })

  it('a chat turn, a phone call, jobs, a webhook delivery and the pool move their series', async () => {
    verifies('ops.metrics.work')
    const api = createApi(server.base, t.key)
    const hook = await api.post('/webhooks/endpoints', { url: rx.url('/m'), events: ['conversation.started'] })
    expect(hook.status, hook.text).toBe(201)
    const before = await scrape()
    const turnsBefore = countOf(before.families, 'svc_chat_turn_duration_seconds', { surface: 'chat' })
    const c = await api.post('/conversations', { agent_id: chatAgent })
    expect(c.status, c.text).toBe(201)
    const m = await api.post(`/conversations/${c.body.conversation_id}/messages`, { text: 'Hello, what do you sell?' })
    expect(m.status, m.text).toBe(200)
    const to = freshNumber()
    const num = await api.post('/phone-numbers', { e164: to, agent_id: phoneAgent })
    expect(num.status, num.text).toBe(201)
    const call = await api.post('/simulator/inbound-calls', {
      to,
      from: freshNumber((n) => n !== to),
      utterances: ['Hello, are you open today?', 'Thank you, goodbye.'],
    })
    expect(call.status, call.text).toBe(202)
    await rx.waitFor((r) => r.length > 0, 'the webhook delivery', 30_000)
    const after = await until(
      'the call to end and its stages to be counted',
      async () => {
        const s = await scrape()
        const done = (await api.get(`/conversations/${call.body.conversation_id}`)).body.status !== 'in_progress'
        return done && countOf(s.families, 'svc_voice_turn_latency_seconds', { stage: 'first_audio' }) >= 1 ? s : null
      },
      60_000,
    )
    const f = after.families
    expect(countOf(f, 'svc_chat_turn_duration_seconds', { surface: 'chat', engine: 'local' })).toBe(turnsBefore + 1)
    expect(countOf(f, 'svc_chat_turn_duration_seconds', { surface: 'phone', engine: 'local' })).toBeGreaterThanOrEqual(
      1,
    )
    for (const stage of ['endpoint', 'stt', 'llm_first_token', 'tts_first_byte', 'first_audio'])
      expect(countOf(f, 'svc_voice_turn_latency_seconds', { stage }), stage).toBeGreaterThanOrEqual(1)
    expect(countOf(f, 'svc_webhook_deliveries_total', { result: 'succeeded' })).toBeGreaterThanOrEqual(1)
    // The start-up sweeps and the call's jobs (its summary) ran here, each under its queue's name.
    expect(countOf(f, 'svc_jobs_total', { result: 'completed' })).toBeGreaterThanOrEqual(1)
    for (const q of samples(f, 'svc_jobs_total').map((x) => x.labels?.queue)) expect(q).toMatch(/^[a-z][a-z0-9_.-]+$/)
    // The call has ended: no live session; the pool reports its size and its connections by state.
    expect(Number(samples(f, 'svc_calls_active')[0]?.value)).toBe(0)
    const pool = Object.fromEntries(
      samples(f, 'svc_db_pool_connections').map((s) => [s.labels?.state, Number(s.value)]),
    )
    expect(pool.max).toBeGreaterThanOrEqual(1)
    expect((pool.active ?? 0) + (pool.idle ?? 0)).toBeGreaterThanOrEqual(1)
  }, 120_000)
})
