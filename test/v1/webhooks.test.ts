// Webhooks over HTTP against the shared server, with a real receiver on 127.0.0.1: endpoints and their
// validation, events from real conversations (started, ended, summary.ready), signatures checked with
// verifyWebhook, retries on the injected short schedule (SVC_WEBHOOK_RETRY_SCHEDULE=1,…), exhaustion,
// replay, disabled and unsubscribed endpoints, rotation with two signatures, the test ping and its
// quota, the deliveries list and its cursor, and tenant isolation.
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, err } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { startReceiver, type Receiver, type Received } from '../helpers/receiver'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'
import { verifyWebhook } from '~/domain/webhooks/verify'
import { sleep, until } from '../helpers/wait'

describe('webhooks (shared server)', () => {
  const base = inject('base')
  const master = createApi(base, inject('masterKey'))
  let t: Tenant
  let other: Tenant
  let site: TestSite
  let rx: Receiver
  let agentId: string

  beforeAll(async () => {
    rx = await startReceiver()
    site = await serveSite({
      '/': {
        body: html(
          'Wombat Bakery',
          '<h1>Wombat Bakery</h1><p>Wombat Bakery bakes sourdough bread in Perth every morning.</p>',
        ),
      },
    })
    t = await createTenant(master)
    other = await createTenant(master)
    agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
  }, 90_000)
  afterAll(async () => {
    await rx?.close()
    await site?.close()
  })

  const create = (body: Record<string, unknown>, api = t.api) => api.post('/webhooks/endpoints', body)
  const deliveriesOf = async (query: string, api = t.api) => {
    const r = await api.get(`/webhooks/deliveries?${query}`)
    expect(r.status).toBe(200)
    return r.body.data as any[]
  }
  const startConversation = async () => {
    const c = await t.api.post('/conversations', { agent_id: agentId })
    expect(c.status).toBe(201)
    return c.body.conversation_id as string
  }

  it('creates an endpoint with its secret once; reads, lists and patches never show it', async () => {
    verifies('webhooks.endpoints', 'webhooks.secrets')
    const c = await create({ url: rx.url('/crud'), events: ['conversation.started'], description: 'CRM sync' })
    expect(c.status).toBe(201)
    expect(c.body).toMatchObject({
      endpoint_id: expect.stringMatching(/^whk_\d+$/),
      account_id: t.accountId,
      url: rx.url('/crud'),
      description: 'CRM sync',
      events: ['conversation.started'],
      enabled: true,
      environment: 'live',
      api_version: 'v1',
      previous_secret_expires_at: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
    })
    const id = c.body.endpoint_id
    const secret = c.body.secret as string
    const got = await t.api.get(`/webhooks/endpoints/${id}`)
    expect(got.status).toBe(200)
    expect(got.body).not.toHaveProperty('secret')
    expect(got.text).not.toContain(secret)
    const list = await t.api.get('/webhooks/endpoints')
    expect(list.status).toBe(200)
    expect(list.body.data.map((e: any) => e.endpoint_id)).toContain(id)
    expect(list.text).not.toContain(secret)
    expect(list.text).not.toContain('whsec_')

    const p = await t.api.patch(`/webhooks/endpoints/${id}`, {
      events: ['conversation.ended', 'summary.ready'],
      description: null,
      enabled: false,
    })
    expect(p.status).toBe(200)
    expect(p.body).toMatchObject({
      endpoint_id: id,
      events: ['conversation.ended', 'summary.ready'],
      description: null,
      enabled: false,
    })
    expect(p.text).not.toContain('whsec_')

    // Deleting is additive to the contract: 204, then the endpoint is gone.
    expect((await t.api.delete(`/webhooks/endpoints/${id}`)).status).toBe(204)
    expect((await t.api.get(`/webhooks/endpoints/${id}`)).status).toBe(404)
    expect((await t.api.get('/webhooks/endpoints')).body.data.map((e: any) => e.endpoint_id)).not.toContain(id)
  })

  it('refuses bad bodies: unknown field, empty patch, bad url, bad or empty events', async () => {
    verifies('webhooks.validation', 'errors.unsupported_field', 'errors.empty_update')
    const ok = { url: rx.url('/v'), events: ['conversation.started'] }
    const cases: [Record<string, unknown>, number, string, string | null][] = [
      [{ ...ok, colour: 'blue' }, 400, 'unsupported_field', 'colour'],
      [{ ...ok, events: ['conversation.exploded'] }, 400, 'validation_error', 'events.0'],
      [{ ...ok, events: [] }, 400, 'validation_error', 'events'],
      [{ ...ok, events: ['summary.ready', 'summary.ready'] }, 400, 'validation_error', 'events'],
      [{ url: rx.url('/v') }, 400, 'validation_error', 'events'],
      [{ ...ok, url: 'not a url' }, 400, 'invalid_url', 'url'],
      [{ ...ok, url: 'ftp://example.com/hook' }, 400, 'invalid_url', 'url'],
      [{ ...ok, url: 'http://93.184.216.34/hook' }, 400, 'invalid_url', 'url'], // plain http to a host not allow-listed
      [{ ...ok, url: 'https://10.1.2.3/hook' }, 400, 'invalid_url', 'url'],
      [{ ...ok, url: 'https://localhost/hook' }, 400, 'invalid_url', 'url'],
      [{ ...ok, url: 'https://169.254.169.254/latest' }, 400, 'invalid_url', 'url'],
      [{ ...ok, url: 'https://user:pw@93.184.216.34/hook' }, 400, 'invalid_url', 'url'],
      [{ ...ok, enabled: 'yes' }, 400, 'validation_error', 'enabled'],
    ]
    for (const [body, status, code, field] of cases) {
      const r = await create(body)
      expect(r.status, JSON.stringify(body)).toBe(status)
      expect(err(r), JSON.stringify(body)).toMatchObject({ code, field })
    }
    const c = await create(ok)
    expect(c.status).toBe(201)
    const id = c.body.endpoint_id
    expect(err(await t.api.patch(`/webhooks/endpoints/${id}`, {}))).toMatchObject({ code: 'empty_update' })
    expect(err(await t.api.request('PATCH', `/webhooks/endpoints/${id}`, { raw: '' }))).toMatchObject({
      code: 'empty_update',
    })
    expect(err(await t.api.patch(`/webhooks/endpoints/${id}`, { secret: 'whsec_mine' }))).toMatchObject({
      code: 'unsupported_field',
      field: 'secret',
    })
    expect(err(await t.api.patch(`/webhooks/endpoints/${id}`, { url: 'https://192.168.0.1/x' }))).toMatchObject({
      code: 'invalid_url',
      field: 'url',
    })
    expect(err(await t.api.patch(`/webhooks/endpoints/${id}`, { events: ['call.maybe'] }))).toMatchObject({
      code: 'validation_error',
      field: 'events.0',
    })
    expect(err(await t.api.get('/webhooks/endpoints/whk_x'))).toMatchObject({ code: 'invalid_id' })
    expect(err(await t.api.get('/webhooks/deliveries/dlv_1'))).toMatchObject({ code: 'invalid_id' })
    expect(err(await t.api.get('/webhooks/deliveries?status=lost'))).toMatchObject({ code: 'unsupported_filter' })
    expect(err(await t.api.get('/webhooks/deliveries?event=call.maybe'))).toMatchObject({ code: 'unsupported_filter' })
    expect(err(await t.api.get('/webhooks/deliveries?colour=red'))).toMatchObject({ code: 'unsupported_filter' })
    expect(err(await t.api.get('/webhooks/deliveries?since=yesterday'))).toMatchObject({ code: 'invalid_date' })
    // The scope: a key without webhooks:manage.
    const narrow = await createTenant(master, { scopes: ['conversations:read'] })
    expect(err(await narrow.api.get('/webhooks/endpoints'))).toMatchObject({ code: 'insufficient_scope' })
    // The master key needs X-Svc-Account on these data routes.
    expect(err(await master.get('/webhooks/endpoints'))).toMatchObject({ code: 'forbidden_account' })
    expect((await master.get('/webhooks/endpoints', { headers: { 'x-svc-account': t.accountId } })).status).toBe(200)
  })

  it('never answers 500 to random bodies on create and patch', async () => {
    verifies('errors.internal_error')
    const ep = await create({ url: rx.url('/fuzz'), events: ['summary.ready'], enabled: false })
    const keys = fc.constantFrom('url', 'events', 'description', 'enabled', 'secret', '__proto__', '')
    const values = fc.oneof(
      fc.jsonValue(),
      fc.constantFrom(
        rx.url('/fuzz'),
        'https://10.0.0.1/',
        'http://[::1]/',
        'https://a.b',
        ['summary.ready'],
        ['nope'],
      ),
    )
    const bodies = fc.oneof(
      fc.json(),
      fc.dictionary(keys, values, { maxKeys: 4 }).map((o) => JSON.stringify(o)),
    )
    await fc.assert(
      fc.asyncProperty(bodies, fc.boolean(), async (raw, patch) => {
        const r = await t.api.request(
          patch ? 'PATCH' : 'POST',
          patch ? `/webhooks/endpoints/${ep.body.endpoint_id}` : '/webhooks/endpoints',
          { raw, headers: { 'content-type': 'application/json' } },
        )
        expect(r.status).toBeLessThan(500)
        if (r.status >= 400) expect(r.body.error.code).toMatch(/^[a-z_]+$/)
        // Keep the patched endpoint quiet whatever the body did to it.
        if (patch && r.status === 200)
          await t.api.patch(`/webhooks/endpoints/${ep.body.endpoint_id}`, { enabled: false })
      }),
      { numRuns: 80 },
    )
  })

  it('delivers conversation.started, conversation.ended and summary.ready of a real conversation, signed; disabled and unsubscribed endpoints get nothing', async () => {
    verifies('webhooks.signature', 'webhooks.events', 'webhooks.delivery')
    const main = await create({
      url: rx.url('/main'),
      events: ['conversation.started', 'conversation.ended', 'summary.ready'],
    })
    const off = await create({
      url: rx.url('/off'),
      events: ['conversation.started', 'conversation.ended', 'summary.ready'],
      enabled: false,
    })
    const calls = await create({ url: rx.url('/calls'), events: ['call.completed', 'call.failed'] })
    const theirs = await create(
      { url: rx.url('/theirs'), events: ['conversation.started', 'conversation.ended', 'summary.ready'] },
      other.api,
    )
    for (const r of [main, off, calls, theirs]) expect(r.status).toBe(201)

    const conv = await startConversation()
    const msg = await t.api.post(`/conversations/${conv}/messages`, { text: 'Do you bake sourdough bread?' })
    expect(msg.status).toBe(200)
    const end = await t.api.post(`/conversations/${conv}/end`)
    expect(end.status).toBe(200)
    const endedAt = Date.now()

    const mine = (r: Received[]) => r.filter((x) => x.path === '/main' && x.json?.data?.conversation_id === conv)
    await rx.waitFor((r) => mine(r).length >= 3, 'three events of the conversation')
    const got = mine(rx.received)
    expect(got.map((g) => g.json.type).sort()).toEqual(['conversation.ended', 'conversation.started', 'summary.ready'])
    const ended = got.find((g) => g.json.type === 'conversation.ended')!
    // The latency from the end call to the receiver (the poll interval is 0.5 s in tests).
    expect(ended.at - endedAt).toBeLessThan(8000)
    console.log(`[webhooks] end → conversation.ended at the receiver: ${ended.at - endedAt} ms`)
    for (const g of got) {
      expect(verifyWebhook({ secret: main.body.secret, body: g.body, headers: g.headers })).toBe(true)
      // Keyed with the whole whsec_ string over "<timestamp>.<raw body>", nothing else verifies.
      expect(verifyWebhook({ secret: main.body.secret.replace(/^whsec_/, ''), body: g.body, headers: g.headers })).toBe(
        false,
      )
      expect(verifyWebhook({ secret: main.body.secret, body: g.body + ' ', headers: g.headers })).toBe(false)
      expect(
        verifyWebhook({ secret: main.body.secret, body: g.body, headers: g.headers, now: Date.now() + 6 * 60_000 }),
      ).toBe(false)
      expect(g.headers['x-svc-signature']).toMatch(/^v1=[0-9a-f]{64}$/)
      expect(g.headers['x-svc-event']).toBe(g.json.type)
      expect(g.headers['x-svc-delivery']).toMatch(/^dlv_[0-9A-Z]{26}$/)
      expect(g.headers['content-type']).toBe('application/json')
      expect(g.json).toMatchObject({
        id: expect.stringMatching(/^evt_/),
        api_version: 'v1',
        account_id: t.accountId,
        created_at: expect.any(String),
      })
      expect(Object.keys(g.json)).toEqual(['id', 'type', 'created_at', 'api_version', 'account_id', 'data'])
    }
    expect(ended.json.data).toMatchObject({ conversation_id: conv, status: 'completed' })
    expect(got.find((g) => g.json.type === 'summary.ready')!.json.data).toMatchObject({ conversation_id: conv })

    // The other tenant's endpoint got its own tenant's events only (none of these).
    await sleep(1500)
    expect(rx.at('/off')).toHaveLength(0)
    expect(rx.at('/calls')).toHaveLength(0)
    expect(rx.at('/theirs').filter((r) => r.json?.data?.conversation_id === conv)).toHaveLength(0)
    expect(await deliveriesOf(`endpoint_id=${off.body.endpoint_id}`)).toHaveLength(0)
    expect(await deliveriesOf(`endpoint_id=${calls.body.endpoint_id}`)).toHaveLength(0)

    const listed = await deliveriesOf(`endpoint_id=${main.body.endpoint_id}`)
    expect(listed.length).toBeGreaterThanOrEqual(3)
    for (const d of listed) {
      expect(d).toMatchObject({
        delivery_id: expect.stringMatching(/^dlv_/),
        endpoint_id: main.body.endpoint_id,
        status: 'succeeded',
        attempt_count: 1,
        replayed_from: null,
      })
      expect(d.attempts[0]).toMatchObject({ attempt: 1, status_code: 200, error: null, latency_ms: expect.any(Number) })
    }
    const one = await t.api.get(`/webhooks/deliveries/${ended.headers['x-svc-delivery']}`)
    expect(one.status).toBe(200)
    expect(one.body).toMatchObject({
      event_id: ended.json.id,
      event_type: 'conversation.ended',
      status: 'succeeded',
      payload: JSON.parse(ended.body),
    })

    // Disabled, then enabled again: events written while disabled are not queued for it.
    const again = await t.api.patch(`/webhooks/endpoints/${off.body.endpoint_id}`, { enabled: true })
    expect(again.status).toBe(200)
    const conv2 = await startConversation()
    await rx.waitFor(
      (r) => r.some((x) => x.path === '/off' && x.json?.data?.conversation_id === conv2),
      'the re-enabled endpoint',
    )
    expect(rx.at('/off').every((x) => x.json.data.conversation_id === conv2)).toBe(true)
  })

  it('a receiver that never answers delays neither another endpoint nor the API', async () => {
    verifies('webhooks.delivery')
    rx.on('/stuck', () => 'hang')
    const stuck = await create({ url: rx.url('/stuck'), events: ['conversation.started'] })
    const quick = await create({ url: rx.url('/quick'), events: ['conversation.started'] })
    expect(stuck.status).toBe(201)
    expect(quick.status).toBe(201)
    const conv = await startConversation()
    const started = Date.now()
    // Both are sent; the stuck one holds its request open (up to the 10 s timeout) while the other lands.
    await rx.waitFor(
      (r) => r.some((x) => x.path === '/stuck' && x.json?.data?.conversation_id === conv),
      'the stuck endpoint to be called',
    )
    await rx.waitFor(
      (r) => r.some((x) => x.path === '/quick' && x.json?.data?.conversation_id === conv),
      'the quick endpoint',
      5_000,
    )
    const quickAt = rx.at('/quick').find((x) => x.json?.data?.conversation_id === conv)!.at
    expect(quickAt - started).toBeLessThan(5_000)
    // While the stuck request is still open, the API answers at once.
    const t0 = Date.now()
    const r = await t.api.get(`/conversations/${conv}`)
    expect(r.status).toBe(200)
    expect(Date.now() - t0).toBeLessThan(2_000)
    const pending = await deliveriesOf(`endpoint_id=${stuck.body.endpoint_id}`)
    expect(pending[0].status).not.toBe('succeeded')
    // Stop it retrying against the hung receiver for the rest of the file.
    expect((await t.api.patch(`/webhooks/endpoints/${stuck.body.endpoint_id}`, { enabled: false })).status).toBe(200)
  })

  it('retries a receiver that fails twice and delivers on the third attempt; replay sends the same event id again', async () => {
    verifies('webhooks.retries')
    rx.on('/flaky', (_r, nth) => (nth <= 2 ? 500 : 200))
    const ep = await create({ url: rx.url('/flaky'), events: ['conversation.started'] })
    expect(ep.status).toBe(201)
    const conv = await startConversation()
    // On PostgreSQL every test server shares the delivery queue: an attempt claimed by another file's server
    // that is then killed waits for its lease (20 s) to lapse before it is sent again.
    await rx.waitFor((r) => r.filter((x) => x.path === '/flaky').length >= 3, 'the third attempt', 45_000)
    const hits = rx.at('/flaky')
    expect(hits.map((h) => h.json.data.conversation_id)).toEqual([conv, conv, conv])
    // One delivery, three attempts: same delivery id and event id each time, each signed afresh.
    expect(new Set(hits.map((h) => h.headers['x-svc-delivery'])).size).toBe(1)
    expect(new Set(hits.map((h) => h.json.id)).size).toBe(1)
    for (const h of hits) expect(verifyWebhook({ secret: ep.body.secret, body: h.body, headers: h.headers })).toBe(true)
    // The schedule's first two delays (1 s each, ±10 %) separate the attempts.
    expect(hits[1].at - hits[0].at).toBeGreaterThanOrEqual(850)
    expect(hits[2].at - hits[1].at).toBeGreaterThanOrEqual(850)

    const d = await until('the delivery succeeded', async () => {
      const [x] = await deliveriesOf(`endpoint_id=${ep.body.endpoint_id}`)
      return x?.status === 'succeeded' ? x : null
    })
    expect(d).toMatchObject({
      attempt_count: 3,
      last_status_code: 200,
      delivered_at: expect.any(String),
      next_attempt_at: null,
    })
    expect(d.attempts.map((a: any) => a.status_code)).toEqual([500, 500, 200])
    expect(d.attempts[0].error).toContain('500')

    const replay = await t.api.post(`/webhooks/deliveries/${d.delivery_id}/replay`)
    expect(replay.status).toBe(201)
    expect(replay.body).toMatchObject({
      delivery_id: expect.stringMatching(/^dlv_/),
      replayed_from: d.delivery_id,
      event_id: d.event_id,
      status: 'pending',
      attempt_count: 0,
    })
    expect(replay.body.delivery_id).not.toBe(d.delivery_id)
    await rx.waitFor((r) => r.filter((x) => x.path === '/flaky').length >= 4, 'the replay')
    const re = rx.at('/flaky')[3]
    expect(re.json.id).toBe(hits[0].json.id)
    expect(re.body).toBe(hits[0].body)
    expect(re.headers['x-svc-delivery']).toBe(replay.body.delivery_id)
    expect(verifyWebhook({ secret: ep.body.secret, body: re.body, headers: re.headers })).toBe(true)
    const both = await deliveriesOf(`event_id=${d.event_id}&endpoint_id=${ep.body.endpoint_id}`)
    expect(both.map((x) => x.delivery_id).sort()).toEqual([d.delivery_id, replay.body.delivery_id].sort())
  }, 120_000)

  it('gives up after 7 attempts: exhausted, every attempt recorded', async () => {
    verifies('webhooks.retries')
    rx.on('/dead', () => 503)
    const ep = await create({ url: rx.url('/dead'), events: ['conversation.started'] })
    await startConversation()
    const d = await until(
      'exhausted',
      async () => {
        const [x] = await deliveriesOf(`endpoint_id=${ep.body.endpoint_id}&status=exhausted`)
        return x
      },
      30_000,
    )
    expect(d).toMatchObject({
      status: 'exhausted',
      attempt_count: 7,
      last_status_code: 503,
      next_attempt_at: null,
      delivered_at: null,
    })
    expect(d.attempts).toHaveLength(7)
    expect(rx.at('/dead')).toHaveLength(7)
    expect(await deliveriesOf(`endpoint_id=${ep.body.endpoint_id}&status=succeeded`)).toHaveLength(0)
  })

  it('rotate-secret: a new secret once; for 24 h both sign, new first, and both verify', async () => {
    verifies('webhooks.signature', 'webhooks.rotation')
    const ep = await create({ url: rx.url('/rotate'), events: ['conversation.started'] })
    const oldSecret = ep.body.secret as string
    const conv1 = await startConversation()
    await rx.waitFor(
      (r) => r.some((x) => x.path === '/rotate' && x.json.data.conversation_id === conv1),
      'the first event',
    )
    const rot = await t.api.post(`/webhooks/endpoints/${ep.body.endpoint_id}/rotate-secret`)
    expect(rot.status).toBe(200)
    expect(rot.body.secret).toMatch(/^whsec_/)
    expect(rot.body.secret).not.toBe(oldSecret)
    const grace = new Date(rot.body.previous_secret_expires_at).getTime() - Date.now()
    expect(grace).toBeGreaterThan(23.9 * 3600_000)
    expect(grace).toBeLessThanOrEqual(24 * 3600_000)
    const got = await t.api.get(`/webhooks/endpoints/${ep.body.endpoint_id}`)
    expect(got.text).not.toContain(rot.body.secret)

    const conv2 = await startConversation()
    await rx.waitFor(
      (r) => r.some((x) => x.path === '/rotate' && x.json.data.conversation_id === conv2),
      'the event after rotation',
    )
    const h = rx.at('/rotate').find((x) => x.json.data.conversation_id === conv2)!
    const sigs = String(h.headers['x-svc-signature']).split(',')
    expect(sigs).toHaveLength(2)
    const one = (sig: string) => ({ ...h.headers, 'x-svc-signature': sig })
    expect(verifyWebhook({ secret: rot.body.secret, body: h.body, headers: one(sigs[0]) })).toBe(true)
    expect(verifyWebhook({ secret: oldSecret, body: h.body, headers: one(sigs[1]) })).toBe(true)
    expect(verifyWebhook({ secret: oldSecret, body: h.body, headers: h.headers })).toBe(true)
    expect(verifyWebhook({ secret: rot.body.secret, body: h.body, headers: h.headers })).toBe(true)
    expect(verifyWebhook({ secret: [oldSecret, rot.body.secret], body: h.body, headers: h.headers })).toBe(true)
    expect(verifyWebhook({ secret: 'whsec_' + 'A'.repeat(43), body: h.body, headers: h.headers })).toBe(false)
  })

  it('test ping: a signed ping reported with status and latency, counted against webhook_tests', async () => {
    verifies('webhooks.test-ping', 'limits.webhook-tests')
    const tenant = await createTenant(master)
    rx.on('/pingfail', () => 503)
    const ep = await create({ url: rx.url('/ping'), events: ['summary.ready'], enabled: false }, tenant.api)
    const bad = await create({ url: rx.url('/pingfail'), events: ['summary.ready'] }, tenant.api)
    const r = await tenant.api.post(`/webhooks/endpoints/${ep.body.endpoint_id}/test`)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      endpoint_id: ep.body.endpoint_id,
      success: true,
      status_code: 200,
      error: null,
      latency_ms: expect.any(Number),
      delivery_id: expect.stringMatching(/^dlv_/),
      event_id: expect.stringMatching(/^evt_/),
      quota: { limit: 50, used: 1, remaining: 49 },
    })
    const ping = rx.at('/ping').at(-1)!
    expect(ping.json).toMatchObject({
      id: r.body.event_id,
      type: 'ping',
      account_id: tenant.accountId,
      data: { endpoint_id: ep.body.endpoint_id },
    })
    expect(ping.headers['x-svc-event']).toBe('ping')
    expect(verifyWebhook({ secret: ep.body.secret, body: ping.body, headers: ping.headers })).toBe(true)

    const f = await tenant.api.post(`/webhooks/endpoints/${bad.body.endpoint_id}/test`)
    expect(f.status).toBe(200)
    expect(f.body).toMatchObject({ success: false, status_code: 503, quota: { used: 2 } })
    expect(f.body.error).toContain('503')

    const limits = await tenant.api.get(`/accounts/${tenant.accountId}/limits`)
    expect(limits.status).toBe(200)
    expect(JSON.stringify(limits.body)).toContain('webhook_tests')

    let last = f
    for (let i = 3; i <= 50; i++) {
      last = await tenant.api.post(`/webhooks/endpoints/${ep.body.endpoint_id}/test`)
      expect(last.status).toBe(200)
    }
    expect(last.body.quota).toEqual({ limit: 50, used: 50, remaining: 0 })
    const before = rx.at('/ping').length
    const over = await tenant.api.post(`/webhooks/endpoints/${ep.body.endpoint_id}/test`)
    expect(over.status).toBe(429)
    expect(err(over).code).toBe('quota_exceeded')
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(rx.at('/ping').length).toBe(before)
  })

  it('lists deliveries newest first with filters and a signed keyset cursor', async () => {
    verifies('webhooks.deliveries-list', 'cursor.signed-and-bound')
    const ep = await create({ url: rx.url('/paged'), events: ['conversation.started'] })
    const since = new Date().toISOString()
    for (let i = 0; i < 3; i++) await startConversation()
    await rx.waitFor((r) => r.filter((x) => x.path === '/paged').length >= 3, 'three deliveries')
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const r: any = await t.api.get(
        `/webhooks/deliveries?endpoint_id=${ep.body.endpoint_id}&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      )
      expect(r.status).toBe(200)
      expect(r.body.pagination.limit).toBe(1)
      seen.push(...r.body.data.map((d: any) => d.delivery_id))
      cursor = r.body.pagination.next_cursor
    } while (cursor)
    expect(seen).toHaveLength(3)
    expect(new Set(seen).size).toBe(3)
    const all = await deliveriesOf(`endpoint_id=${ep.body.endpoint_id}`)
    expect(all.map((d) => d.delivery_id)).toEqual(seen)
    const created = all.map((d) => d.created_at)
    expect([...created].sort().reverse()).toEqual(created)
    expect(
      (
        await deliveriesOf(
          `endpoint_id=${ep.body.endpoint_id}&event=conversation.started&since=${encodeURIComponent(since)}`,
        )
      ).length,
    ).toBe(3)
    expect(await deliveriesOf(`endpoint_id=${ep.body.endpoint_id}&event=summary.ready`)).toHaveLength(0)
    expect(
      await deliveriesOf(
        `endpoint_id=${ep.body.endpoint_id}&since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
      ),
    ).toHaveLength(0)
    // A cursor is bound to its filters and credential.
    const first = await t.api.get(`/webhooks/deliveries?endpoint_id=${ep.body.endpoint_id}&limit=1`)
    const next = first.body.pagination.next_cursor
    expect(err(await t.api.get(`/webhooks/deliveries?limit=1&cursor=${encodeURIComponent(next)}`)).code).toBe(
      'invalid_cursor',
    )
    expect(
      err(
        await other.api.get(
          `/webhooks/deliveries?endpoint_id=${ep.body.endpoint_id}&limit=1&cursor=${encodeURIComponent(next)}`,
        ),
      ).code,
    ).toBe('invalid_cursor')
  })

  it("another tenant's endpoints and deliveries answer 404", async () => {
    verifies('tenancy.isolation', 'webhooks.tenancy')
    const ep = await create({ url: rx.url('/mine'), events: ['conversation.started'] })
    await startConversation()
    const d = await until('a delivery', async () =>
      (await deliveriesOf(`endpoint_id=${ep.body.endpoint_id}`)).find((x) => x.status === 'succeeded'),
    )
    const id = ep.body.endpoint_id
    for (const r of [
      await other.api.get(`/webhooks/endpoints/${id}`),
      await other.api.patch(`/webhooks/endpoints/${id}`, { enabled: false }),
      await other.api.post(`/webhooks/endpoints/${id}/rotate-secret`),
      await other.api.post(`/webhooks/endpoints/${id}/test`),
      await other.api.delete(`/webhooks/endpoints/${id}`),
      await other.api.get(`/webhooks/deliveries/${d.delivery_id}`),
      await other.api.post(`/webhooks/deliveries/${d.delivery_id}/replay`),
    ]) {
      expect(r.status).toBe(404)
      expect(err(r).code).toBe('not_found')
    }
    expect(await deliveriesOf(`endpoint_id=${id}`, other.api)).toHaveLength(0)
    expect((await other.api.get('/webhooks/endpoints')).body.data.map((e: any) => e.endpoint_id)).not.toContain(id)
    // Still intact for its owner.
    expect((await t.api.get(`/webhooks/endpoints/${id}`)).body.enabled).toBe(true)
  })

  it('caps live endpoints at 20 per account, also under concurrent creates; deleted ones do not count', async () => {
    verifies('webhooks.endpoint-cap')
    const tenant = await createTenant(master)
    const body = { url: rx.url('/capped'), events: ['summary.ready'], enabled: false }
    // 25 creates at once: the count runs under the account lock, so exactly 20 pass.
    const all = await Promise.all(Array.from({ length: 25 }, () => create(body, tenant.api)))
    const statuses = all.map((r) => r.status)
    expect(statuses.filter((s) => s === 201)).toHaveLength(20)
    expect(statuses.filter((s) => s === 403)).toHaveLength(5)
    for (const r of all.filter((x) => x.status === 403)) {
      expect(err(r)).toMatchObject({ code: 'plan_limit_reached' })
      expect(err(r).message).toContain('20')
    }
    const list = await tenant.api.get('/webhooks/endpoints?limit=100')
    expect(list.body.data).toHaveLength(20)
    const over = await create(body, tenant.api)
    expect(over.status).toBe(403)
    expect(err(over).code).toBe('plan_limit_reached')
    // A deleted endpoint frees its place; the cap is per account, so another tenant is unaffected.
    expect(
      (await tenant.api.delete(`/webhooks/endpoints/${all.find((r) => r.status === 201)!.body.endpoint_id}`)).status,
    ).toBe(204)
    expect((await create(body, tenant.api)).status).toBe(201)
    expect((await create(body, tenant.api)).status).toBe(403)
    const elsewhere = await createTenant(master)
    expect((await create(body, elsewhere.api)).status).toBe(201)
  })

  it('a test ping is stored as a delivery under the id the receiver saw: listed as a ping, readable and replayable, sent to no other endpoint', async () => {
    verifies('webhooks.ping-stored', 'webhooks.test-ping')
    const tenant = await createTenant(master)
    rx.on('/ping-stored-fail', () => 500)
    const ep = await create({ url: rx.url('/ping-stored'), events: ['conversation.started'] }, tenant.api)
    const failing = await create({ url: rx.url('/ping-stored-fail'), events: ['conversation.started'] }, tenant.api)
    const bystander = await create(
      { url: rx.url('/ping-bystander'), events: ['conversation.started', 'conversation.ended', 'summary.ready'] },
      tenant.api,
    )
    for (const r of [ep, failing, bystander]) expect(r.status).toBe(201)

    const r = await tenant.api.post(`/webhooks/endpoints/${ep.body.endpoint_id}/test`)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ success: true, quota: { used: 1 } })
    const sent = rx.at('/ping-stored').at(-1)!
    const dlv = sent.headers['x-svc-delivery'] as string
    expect(dlv).toBe(r.body.delivery_id)

    const one = await tenant.api.get(`/webhooks/deliveries/${dlv}`)
    expect(one.status).toBe(200)
    expect(one.body).toMatchObject({
      delivery_id: dlv,
      endpoint_id: ep.body.endpoint_id,
      event_id: r.body.event_id,
      event_type: 'ping',
      status: 'succeeded',
      attempt_count: 1,
      last_status_code: 200,
      last_error: null,
      next_attempt_at: null,
      replayed_from: null,
      delivered_at: expect.any(String),
      payload: JSON.parse(sent.body),
    })
    expect(one.body.attempts).toEqual([
      { attempt: 1, at: expect.any(String), status_code: 200, latency_ms: r.body.latency_ms, error: null },
    ])
    // Every documented key of the list shape, and the ping tells itself apart by its event_type.
    const listed = await deliveriesOf(`endpoint_id=${ep.body.endpoint_id}`, tenant.api)
    expect(listed).toHaveLength(1)
    expect(Object.keys(listed[0]).sort()).toEqual([
      'attempt_count',
      'attempts',
      'created_at',
      'delivered_at',
      'delivery_id',
      'endpoint_id',
      'event_id',
      'event_type',
      'last_error',
      'last_status_code',
      'next_attempt_at',
      'replayed_from',
      'status',
      'updated_at',
    ])
    expect(listed[0]).toMatchObject({ delivery_id: dlv, event_type: 'ping' })
    expect((await deliveriesOf('event=ping', tenant.api)).map((d) => d.delivery_id)).toEqual([dlv])
    expect(await deliveriesOf('event=conversation.started', tenant.api)).toHaveLength(0)

    // A failed ping is stored as exhausted (never retried).
    const f = await tenant.api.post(`/webhooks/endpoints/${failing.body.endpoint_id}/test`)
    expect(f.body).toMatchObject({ success: false, status_code: 500 })
    const fd = await tenant.api.get(`/webhooks/deliveries/${f.body.delivery_id}`)
    expect(fd.body).toMatchObject({
      event_type: 'ping',
      status: 'exhausted',
      attempt_count: 1,
      last_status_code: 500,
      delivered_at: null,
      next_attempt_at: null,
    })
    expect(fd.body.last_error).toContain('500')
    await sleep(1500)
    expect(rx.at('/ping-stored-fail')).toHaveLength(1)

    // Replay: the same ping body again, as a new delivery through the queue.
    const re = await tenant.api.post(`/webhooks/deliveries/${dlv}/replay`)
    expect(re.status).toBe(201)
    expect(re.body).toMatchObject({
      replayed_from: dlv,
      event_id: r.body.event_id,
      event_type: 'ping',
      status: 'pending',
    })
    await rx.waitFor((x) => x.filter((y) => y.path === '/ping-stored').length >= 2, 'the replayed ping')
    const again = rx.at('/ping-stored')[1]
    expect(again.body).toBe(sent.body)
    expect(again.headers['x-svc-delivery']).toBe(re.body.delivery_id)
    expect(again.headers['x-svc-event']).toBe('ping')
    expect(verifyWebhook({ secret: ep.body.secret, body: again.body, headers: again.headers })).toBe(true)
    const replayed = await until('the replay succeeded', async () => {
      const d = (await tenant.api.get(`/webhooks/deliveries/${re.body.delivery_id}`)).body
      return d.status === 'succeeded' ? d : null
    })
    expect(replayed).toMatchObject({ event_type: 'ping', replayed_from: dlv, attempt_count: 1 })
    // Replays do not take a webhook_tests unit; the next ping is the second one.
    expect((await tenant.api.post(`/webhooks/endpoints/${ep.body.endpoint_id}/test`)).body.quota.used).toBe(3)

    // No fan-out: the account's other endpoint got no ping and lists no delivery; another tenant sees none of it.
    await sleep(1000)
    expect(rx.at('/ping-bystander')).toHaveLength(0)
    expect(await deliveriesOf(`endpoint_id=${bystander.body.endpoint_id}`, tenant.api)).toHaveLength(0)
    expect(await deliveriesOf(`event_id=${r.body.event_id}`, tenant.api)).toHaveLength(2)
    expect((await other.api.get(`/webhooks/deliveries/${dlv}`)).status).toBe(404)
    expect(await deliveriesOf('event=ping', other.api)).toHaveLength(0)
  })

  it("one tenant's 200 deliveries to a receiver that never answers do not delay another tenant's delivery", async () => {
    verifies('webhooks.fair-delivery', 'webhooks.endpoint-cap')
    rx.on('/hog', () => 'hang')
    const hog = await createTenant(master)
    const hogAgent = await buildAgent(hog.api, hog.accountId, `${site.origin}/`, { language: 'en' })
    // The cap's worth of endpoints, all to the hanging receiver: 20 × 10 conversations = 200 deliveries.
    const hogEps: string[] = []
    for (let i = 0; i < 20; i++) {
      const r = await create({ url: rx.url('/hog'), events: ['conversation.started'] }, hog.api)
      expect(r.status).toBe(201)
      hogEps.push(r.body.endpoint_id)
    }
    expect(err(await create({ url: rx.url('/hog'), events: ['conversation.started'] }, hog.api)).code).toBe(
      'plan_limit_reached',
    )
    const fair = await create({ url: rx.url('/fair'), events: ['conversation.started'] })
    expect(fair.status).toBe(201)
    try {
      for (let i = 0; i < 10; i++)
        expect((await hog.api.post('/conversations', { agent_id: hogAgent })).status).toBe(201)
      // The hog's receiver is being called and holds every request open.
      await rx.waitFor((r) => r.filter((x) => x.path === '/hog').length >= 8, 'the hanging receiver to be busy', 15_000)
      await sleep(1000)
      const hanging = rx.at('/hog').length
      const conv = await startConversation()
      const started = Date.now()
      const mine = (r: Received[]) => r.find((x) => x.path === '/fair' && x.json?.data?.conversation_id === conv)
      await rx.waitFor((r) => !!mine(r), "the other tenant's delivery", 15_000)
      const latency = mine(rx.received)!.at - started
      console.log(`[webhooks] with ${hanging} requests hanging for another tenant: delivered in ${latency} ms`)
      expect(latency).toBeLessThan(5_000)
      // The hog still has deliveries waiting: the slots were shared, not drained first.
      const waiting = await deliveriesOf('status=pending&limit=100', hog.api)
      expect(waiting.length).toBeGreaterThan(0)
    } finally {
      // Stop the hog's deliveries for the rest of the file (those in flight end at the 10 s timeout).
      for (const id of hogEps) await hog.api.patch(`/webhooks/endpoints/${id}`, { enabled: false })
      await t.api.patch(`/webhooks/endpoints/${fair.body.endpoint_id}`, { enabled: false })
    }
  }, 120_000)

  it('documents the receiver on the Webhooks docs page and reflects webhooks in health', async () => {
    verifies('webhooks.docs')
    const anon = createApi(base)
    const page = await anon.get('/docs/pages/webhooks.md')
    expect(page.status).toBe(200)
    expect(page.text).toContain('X-Svc-Signature')
    expect(page.text).toContain('createHmac')
    expect(page.text).toContain('POST /webhooks/deliveries/{dlv}/replay')
    const health = await anon.get('/health')
    expect(health.body.components.webhooks).toBe('ok')
    const spec = await anon.get('/openapi.json')
    for (const p of [
      '/webhooks/endpoints',
      '/webhooks/endpoints/{whk}',
      '/webhooks/endpoints/{whk}/rotate-secret',
      '/webhooks/endpoints/{whk}/test',
      '/webhooks/deliveries',
      '/webhooks/deliveries/{dlv}/replay',
    ]) {
      expect(spec.body.paths, p).toHaveProperty([p])
    }
  })
})
