// The public widget API (issue 17) on the shared server: an agent built from a site the test serves,
// its widget allowed on shop.example.com and *.example.org. A visitor's browser (simulated with fetch and
// an Origin header) reads the widget settings, starts a conversation, asks a question answered from the
// site, reports events; CORS, tokens, visitor tokens, the per-IP limit (preflights included, and its 429
// readable by an admitted Origin) and the separation from API credentials are checked.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { serveBakery, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'
import { openWidget } from '../helpers/widget'

const ORIGIN = 'https://shop.example.com'

describe('public widget API (shared server)', () => {
  const base = inject('base')
  const serviceOrigin = inject('origin')
  const master = createApi(base, inject('masterKey'))
  let t: Tenant
  let site: TestSite
  let agentId: string
  let otherAgentId: string
  let token: string
  let otherToken: string
  let ipCounter = 0
  // Each call gets its own client IP unless told, so the per-IP limits of one check do not touch another.
  const freshIp = () => `203.0.${Math.floor(++ipCounter / 250) % 250}.${(ipCounter % 250) + 1}`

  const widget = async (
    method: string,
    path: string,
    opts: { body?: unknown; headers?: Record<string, string>; token?: string | null; origin?: string | null } = {},
  ) => {
    const headers: Record<string, string> = { 'x-forwarded-for': freshIp(), ...(opts.headers ?? {}) }
    const tk = opts.token === undefined ? token : opts.token
    if (tk) headers['x-svc-widget-token'] = tk
    const origin = opts.origin === undefined ? ORIGIN : opts.origin
    if (origin) headers.origin = origin
    if (opts.body !== undefined) headers['content-type'] = 'application/json'
    const res = await fetch(`${base}/widget${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    })
    const text = await res.text()
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null }
  }
  const start = (opts: Parameters<typeof widget>[2] = {}) => widget('POST', '/conversations', opts)

  beforeAll(async () => {
    site = await serveBakery('Wombat Bakery', 'Ballarat')
    t = await createTenant(master)
    agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    otherAgentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en', name: 'Second' })
    token = await openWidget(t.api, agentId, { allowed_domains: ['shop.example.com', '*.example.org'] })
    expect(token).toMatch(/^wpk_/)
    otherToken = await openWidget(t.api, otherAgentId, { allowed_domains: ['shop.example.com'] })
  }, 120_000)
  afterAll(async () => {
    await site?.close()
  })

  it('starts a conversation from an allowed Origin, answers from the site with the visitor token, and the account sees it', async () => {
    verifies('widget.public-api', 'widget.cors')
    const c = await start({ body: {} })
    expect(c.status).toBe(201)
    expect(c.body).toMatchObject({
      conversation_id: expect.stringMatching(/^conv_p\d+$/),
      visitor_token: expect.stringMatching(/^svc_vt_/),
      greeting: expect.any(String),
      meta: { request_id: expect.any(String) },
    })
    expect(c.body.greeting.length).toBeGreaterThan(3)
    expect(c.headers.get('access-control-allow-origin')).toBe(ORIGIN)
    expect(c.headers.get('vary')).toMatch(/origin/i)
    const conv = c.body.conversation_id

    const m = await widget('POST', `/conversations/${conv}/messages`, {
      body: { text: 'How much does a sourdough loaf cost?' },
      headers: { 'x-svc-visitor-token': c.body.visitor_token },
    })
    expect(m.status).toBe(200)
    expect(m.body.turn).toMatchObject({ speaker: 'agent', turn_type: 'answer', turn_index: 2 })
    expect(m.body.turn.text).toContain('$9')
    expect(m.body.turns.map((x: any) => x.turn_type)).toEqual(['message', 'answer'])
    expect(m.body.usage).toBeUndefined()
    expect(m.headers.get('access-control-allow-origin')).toBe(ORIGIN)

    // A subdomain of a *.example.org entry is admitted too; a body-less create is fine.
    const sub = await start({ origin: 'https://blog.example.org' })
    expect(sub.status).toBe(201)
    expect(sub.headers.get('access-control-allow-origin')).toBe('https://blog.example.org')

    // The account reads it like any conversation, on channel widget, with the greeting and the turn.
    const read = await t.api.get(`/conversations/${conv}?include=transcript`)
    expect(read.status).toBe(200)
    expect(read.body).toMatchObject({ conversation_id: conv, channel_detail: { channel: 'widget' } })
    expect(JSON.stringify(read.body)).not.toContain(c.body.visitor_token)
    const listed = await t.api.get(`/conversations?channel=widget&agent_id=${agentId}`)
    expect(listed.status).toBe(200)
    expect(listed.body.data.map((x: any) => x.conversation_id)).toContain(conv)
  })

  it('answers the widget settings to an allowed Origin, and nothing readable to anyone else', async () => {
    verifies('widget.config', 'widget.cors')
    const set = await t.api.patch(`/agents/${otherAgentId}/widget`, {
      appearance: { title: 'Ask the bakery', primary_color: '#aa5500', launcher_text: 'Questions?' },
    })
    expect(set.status).toBe(200)
    const c = await widget('GET', '/config', { token: otherToken })
    expect(c.status).toBe(200)
    expect(c.body).toEqual({
      appearance: set.body.appearance,
      greeting: expect.any(String),
      meta: expect.objectContaining({ request_id: expect.any(String) }),
    })
    expect(c.body.appearance).toMatchObject({ title: 'Ask the bakery', theme: null, avatar_url: null })
    expect(c.headers.get('access-control-allow-origin')).toBe(ORIGIN)
    expect(c.headers.get('vary')).toMatch(/origin/i)
    expect(c.headers.get('access-control-expose-headers')).toContain('retry-after')
    // The greeting is the one a conversation starts with, which also answers the appearance now.
    const conv = await start({ token: otherToken })
    expect(conv.status).toBe(201)
    expect(conv.body.greeting).toBe(c.body.greeting)
    expect(conv.body.appearance).toEqual(set.body.appearance)
    // Also under /api/v1, and a GET is preflighted like the POSTs.
    const alias = await fetch(`${serviceOrigin}/api/v1/widget/config`, {
      headers: { 'x-svc-widget-token': otherToken, origin: ORIGIN, 'x-forwarded-for': freshIp() },
    })
    expect(alias.status).toBe(200)
    const pre = await widget('OPTIONS', '/config', {
      token: null,
      headers: { 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-svc-widget-token' },
    })
    expect(pre.status).toBe(204)
    expect(pre.headers.get('access-control-allow-methods')).toContain('GET')

    const evil = await widget('GET', '/config', { token: otherToken, origin: 'https://evil.example.net' })
    expect(evil.status).toBe(403)
    expect(evil.body.error.code).toBe('origin_not_allowed')
    expect(evil.headers.get('access-control-allow-origin')).toBeNull()
    for (const tk of [null, 'nope', `wpk_${'B'.repeat(32)}`]) {
      const bad = await widget('GET', '/config', { token: tk })
      expect(bad.status).toBe(401)
      expect(bad.body.error.code).toBe('invalid_widget_token')
      expect(bad.headers.get('access-control-allow-origin')).toBeNull()
    }
  })

  it('answers preflights only for allowed Origins', async () => {
    verifies('widget.cors')
    const pre = await widget('OPTIONS', '/conversations', {
      token: null,
      headers: { 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-svc-widget-token' },
    })
    expect(pre.status).toBe(204)
    expect(pre.headers.get('access-control-allow-origin')).toBe(ORIGIN)
    expect(pre.headers.get('access-control-allow-methods')).toContain('POST')
    expect(pre.headers.get('access-control-allow-headers')).toContain('x-svc-widget-token')
    expect(pre.headers.get('access-control-allow-headers')).toContain('x-svc-visitor-token')
    const apiPre = await fetch(`${serviceOrigin}/api/v1/widget/events`, {
      method: 'OPTIONS',
      headers: { origin: ORIGIN },
    })
    expect(apiPre.status).toBe(204)

    const bad = await widget('OPTIONS', '/conversations', { token: null, origin: 'https://evil.example.net' })
    expect(bad.status).toBe(403)
    expect(bad.body.error.code).toBe('origin_not_allowed')
    expect(bad.headers.get('access-control-allow-origin')).toBeNull()
    const none = await widget('OPTIONS', '/events', { token: null, origin: null })
    expect(none.status).toBe(403)
    // The REST API stays closed to such an Origin.
    const rest = await fetch(`${base}/conversations`, { method: 'OPTIONS', headers: { origin: ORIGIN } })
    expect(rest.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('refuses a disallowed Origin, no Origin, and look-alike hosts', async () => {
    verifies('widget.cors')
    for (const origin of [
      'https://evil.example.net',
      'https://shop.example.com.evil.net',
      'https://example.org',
      'ftp://shop.example.com',
      'null',
    ]) {
      const r = await start({ origin })
      expect(r.status, origin).toBe(403)
      expect(r.body.error.code).toBe('origin_not_allowed')
      expect(r.headers.get('access-control-allow-origin')).toBeNull()
    }
    const none = await start({ origin: null })
    expect(none.status).toBe(403)
    expect(none.body.error.code).toBe('origin_not_allowed')
    // Another agent's token is checked against that agent's list.
    const other = await start({ token: otherToken, origin: 'https://blog.example.org' })
    expect(other.status).toBe(403)
  })

  it('refuses missing, malformed and unknown tokens, and a regenerated token at once', async () => {
    verifies('widget.tokens')
    for (const tk of [null, 'nope', `wpk_${'A'.repeat(32)}`]) {
      const r = await start({ token: tk })
      expect(r.status).toBe(401)
      expect(r.body.error.code).toBe('invalid_widget_token')
    }
    const a = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en', name: 'Third' })
    const old = await openWidget(t.api, a, { allowed_domains: ['shop.example.com'] })
    expect((await start({ token: old })).status).toBe(201)
    const regen = await t.api.post(`/agents/${a}/widget/regenerate-token`, {})
    expect(regen.status).toBe(200)
    const fresh = regen.body.public_token
    expect(fresh).not.toBe(old)
    const refused = await start({ token: old })
    expect(refused.status).toBe(401)
    expect(refused.body.error.code).toBe('invalid_widget_token')
    expect((await start({ token: fresh })).status).toBe(201)
  }, 120_000)

  it("needs the conversation's visitor token; another agent's conversation is 404", async () => {
    verifies('widget.tokens')
    const c = await start()
    const conv = c.body.conversation_id
    const send = (headers: Record<string, string>, tk?: string) =>
      widget('POST', `/conversations/${conv}/messages`, { body: { text: 'Hello?' }, headers, token: tk })
    const missing = await send({})
    expect(missing.status).toBe(403)
    expect(missing.body.error.code).toBe('invalid_visitor_token')
    const other = await start()
    const wrong = await send({ 'x-svc-visitor-token': other.body.visitor_token })
    expect(wrong.status).toBe(403)
    expect(wrong.body.error.code).toBe('invalid_visitor_token')
    // The other agent's widget token cannot reach this agent's conversation, even with its visitor token.
    const foreign = await send({ 'x-svc-visitor-token': c.body.visitor_token }, otherToken)
    expect(foreign.status).toBe(404)
    expect(foreign.body.error.code).toBe('not_found')
    // An API conversation of the same agent is not a widget conversation.
    const api = await t.api.post('/conversations', { agent_id: agentId })
    const viaWidget = await widget('POST', `/conversations/${api.body.conversation_id}/messages`, {
      body: { text: 'hi' },
      headers: { 'x-svc-visitor-token': c.body.visitor_token },
    })
    expect(viaWidget.status).toBe(404)
  })

  it('takes an Idempotency-Key on every POST, replayed only to the visitor who holds the answer', async () => {
    verifies('contract.smaller-points', 'idempotency.header')
    const key = `wk-${Date.now()}-${Math.random().toString(36).slice(2)}`
    const first = await start({ body: {}, headers: { 'idempotency-key': key } })
    expect(first.status).toBe(201)
    const again = await start({ body: {}, headers: { 'idempotency-key': key } })
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.headers.get('access-control-expose-headers')).toContain('idempotent-replayed')
    expect(again.body).toMatchObject({
      conversation_id: first.body.conversation_id,
      visitor_token: first.body.visitor_token,
    })
    expect(again.body.meta.request_id).not.toBe(first.body.meta.request_id)
    // Another agent's token has keys of its own.
    const elsewhere = await start({ body: {}, token: otherToken, headers: { 'idempotency-key': key } })
    expect(elsewhere.status).toBe(201)
    expect(elsewhere.body.conversation_id).not.toBe(first.body.conversation_id)

    // A retried message is one turn, not two.
    const conv = first.body.conversation_id
    const vt = { 'x-svc-visitor-token': first.body.visitor_token, 'idempotency-key': `${key}-m` }
    const send = (headers: Record<string, string>) =>
      widget('POST', `/conversations/${conv}/messages`, { body: { text: 'Do you sell rye bread?' }, headers })
    const m1 = await send(vt)
    expect(m1.status).toBe(200)
    const m2 = await send(vt)
    expect(m2.status).toBe(200)
    expect(m2.headers.get('idempotent-replayed')).toBe('true')
    expect(m2.body.turn).toEqual(m1.body.turn)
    // Another body under the same key is refused.
    const reused = await widget('POST', `/conversations/${conv}/messages`, {
      body: { text: 'And rolls?' },
      headers: vt,
    })
    expect(reused.status).toBe(409)
    expect(reused.body.error.code).toBe('idempotency_key_reused')
    const read = await t.api.get(`/conversations/${conv}?include=transcript`)
    expect(read.body.transcript.filter((x: any) => x.speaker === 'visitor')).toHaveLength(1)
    // The stored reply is not handed to someone without that conversation's visitor token.
    const stranger = await send({ ...vt, 'x-svc-visitor-token': elsewhere.body.visitor_token })
    expect(stranger.status).toBe(403)
    expect(stranger.body.error.code).toBe('invalid_visitor_token')

    // A retried event counts once (on the other agent, whose message.shown nothing else counts).
    const event = {
      body: { type: 'message.shown', conversation_id: elsewhere.body.conversation_id },
      headers: { 'idempotency-key': `${key}-e` },
      token: otherToken,
    }
    expect((await widget('POST', '/events', event)).status).toBe(204)
    const replayed = await widget('POST', '/events', event)
    expect(replayed.status).toBe(204)
    expect(replayed.headers.get('idempotent-replayed')).toBe('true')
    const counted = await t.api.get(`/metrics?agent_id=${otherAgentId}`)
    expect(counted.body.widget_events.agents[0].counts['message.shown']).toBe(1)

    // Browsers may send the header: preflights allow it.
    const pre = await widget('OPTIONS', '/conversations', {
      token: null,
      headers: { 'access-control-request-method': 'POST', 'access-control-request-headers': 'idempotency-key' },
    })
    expect(pre.headers.get('access-control-allow-headers')).toContain('idempotency-key')
  })

  it('validates bodies like the API', async () => {
    verifies('widget.public-api')
    const c = await start()
    const conv = c.body.conversation_id
    const vt = { 'x-svc-visitor-token': c.body.visitor_token }
    const unknown = await widget('POST', `/conversations/${conv}/messages`, {
      body: { text: 'hi', colour: 'red' },
      headers: vt,
    })
    expect(unknown.status).toBe(400)
    expect(unknown.body.error).toMatchObject({ code: 'unsupported_field', field: 'colour' })
    const empty = await widget('POST', `/conversations/${conv}/messages`, { body: { text: '' }, headers: vt })
    expect(empty.status).toBe(400)
    expect(empty.body.error).toMatchObject({ code: 'validation_error', field: 'text' })
    expect(empty.headers.get('access-control-allow-origin')).toBe(ORIGIN)
    const createExtra = await start({ body: { agent_id: agentId } })
    expect(createExtra.status).toBe(400)
    expect(createExtra.body.error.code).toBe('unsupported_field')
    const badId = await widget('POST', '/conversations/nope/messages', { body: { text: 'hi' }, headers: vt })
    expect(badId.status).toBe(400)
    expect(badId.body.error.code).toBe('invalid_id')
  })

  it('counts browser events per agent in GET /metrics', async () => {
    verifies('widget.events')
    const c = await start()
    for (const type of ['widget.loaded', 'widget.loaded', 'widget.opened', 'message.shown', 'link.clicked']) {
      const r = await widget('POST', '/events', {
        body: { type, conversation_id: c.body.conversation_id, data: { href: 'https://shop.example.com/x' } },
      })
      expect(r.status, type).toBe(204)
      expect(r.headers.get('access-control-allow-origin')).toBe(ORIGIN)
    }
    expect((await widget('POST', '/events', { body: { type: 'widget.closed' }, token: otherToken })).status).toBe(204)
    const badType = await widget('POST', '/events', { body: { type: 'widget.exploded' } })
    expect(badType.status).toBe(400)
    expect(badType.body.error).toMatchObject({ code: 'validation_error', field: 'type' })
    const big = await widget('POST', '/events', { body: { type: 'widget.opened', data: { x: 'y'.repeat(3000) } } })
    expect(big.status).toBe(400)
    expect(big.body.error).toMatchObject({ code: 'validation_error', field: 'data' })
    const foreignConv = await widget('POST', '/events', {
      body: { type: 'widget.opened', conversation_id: c.body.conversation_id },
      token: otherToken,
    })
    expect(foreignConv.status).toBe(404)

    const m = await t.api.get('/metrics')
    expect(m.status).toBe(200)
    const rows = m.body.widget_events.agents
    expect(rows.find((r: any) => r.agent_id === agentId).counts).toEqual({
      'widget.loaded': 2,
      'widget.opened': 1,
      'widget.closed': 0,
      'message.shown': 1,
      'link.clicked': 1,
    })
    expect(rows.find((r: any) => r.agent_id === otherAgentId).counts['widget.closed']).toBe(1)
    expect(m.body.widget_events.totals['widget.loaded']).toBe(2)
    const only = await t.api.get(`/metrics?agent_id=${otherAgentId}`)
    expect(only.body.widget_events.agents.map((r: any) => r.agent_id)).toEqual([otherAgentId])
  })

  it('limits requests per client IP', async () => {
    verifies('widget.limits')
    const ip = '203.0.113.77'
    const statuses: number[] = []
    for (let i = 0; i < 61; i++) {
      const r = await widget('POST', '/events', { body: { type: 'widget.loaded' }, headers: { 'x-forwarded-for': ip } })
      statuses.push(r.status)
      if (r.status === 429) {
        expect(r.body.error.code).toBe('rate_limited')
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
      }
    }
    // The 61st request of the minute is refused and none before it (the statuses are shown on failure).
    expect(
      statuses.slice(0, 60).filter((s) => s === 429),
      JSON.stringify(statuses),
    ).toEqual([])
    expect(statuses[60], JSON.stringify(statuses)).toBe(429)
    // Another IP is not affected.
    expect((await widget('POST', '/events', { body: { type: 'widget.loaded' } })).status).toBe(204)
  })

  it('counts preflights against the per-IP limit, before the query that answers them', async () => {
    verifies('widget.preflight-limit')
    const ip = '203.0.113.78'
    const preflight = (origin: string) =>
      widget('OPTIONS', '/conversations', {
        token: null,
        origin,
        headers: { 'x-forwarded-for': ip, 'access-control-request-method': 'POST' },
      })
    const statuses: number[] = []
    for (let i = 0; i < 60; i++) statuses.push((await preflight('https://evil.example.net')).status)
    expect(statuses.filter((s) => s !== 403)).toEqual([])
    // The 61st is refused by the limit whatever its Origin: no query decided it.
    for (const origin of ['https://evil.example.net', ORIGIN]) {
      const r = await preflight(origin)
      expect(r.status, origin).toBe(429)
      expect(r.body.error.code).toBe('rate_limited')
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(r.headers.get('access-control-allow-origin')).toBeNull()
    }
    // One budget for preflights and requests: that IP's requests are refused too.
    const req = await widget('POST', '/events', { body: { type: 'widget.loaded' }, headers: { 'x-forwarded-for': ip } })
    expect(req.status).toBe(429)
    // Another IP is not affected.
    expect((await widget('OPTIONS', '/events', { token: null })).status).toBe(204)
  })

  it('lets an admitted Origin read its per-IP 429, and nobody else', async () => {
    verifies('widget.limit-cors')
    const ip = '203.0.113.79'
    const headers = { 'x-forwarded-for': ip }
    // Half the budget on preflights, half on requests (the first admits this token from ORIGIN).
    for (let i = 0; i < 30; i++) {
      expect((await widget('OPTIONS', '/config', { token: null, headers })).status).toBe(204)
      expect((await widget('GET', '/config', { headers })).status).toBe(200)
    }
    const limited = await widget('GET', '/config', { headers })
    expect(limited.status).toBe(429)
    expect(limited.body.error.code).toBe('rate_limited')
    expect(limited.headers.get('access-control-allow-origin')).toBe(ORIGIN)
    expect(limited.headers.get('vary')).toMatch(/origin/i)
    expect(limited.headers.get('access-control-expose-headers')).toContain('retry-after')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    const post = await widget('POST', '/events', { body: { type: 'widget.loaded' }, headers })
    expect(post.status).toBe(429)
    expect(post.headers.get('access-control-allow-origin')).toBe(ORIGIN)
    // A refused Origin, a token never admitted from this Origin, an unknown token: a 429 nobody can read.
    for (const [tk, origin] of [
      [token, 'https://evil.example.net'],
      [otherToken, 'https://blog.example.org'],
      [`wpk_${'C'.repeat(32)}`, ORIGIN],
      [null, ORIGIN],
    ] as const) {
      const r = await widget('GET', '/config', { headers, token: tk, origin })
      expect(r.status, `${tk} ${origin}`).toBe(429)
      expect(r.headers.get('access-control-allow-origin'), `${tk} ${origin}`).toBeNull()
    }
  })

  it('is described in the OpenAPI document under Widget and voice', async () => {
    verifies('widget.public-api')
    const doc = (await fetch(`${base}/openapi.json`).then((r) => r.json())) as any
    for (const [p, m] of [
      ['/widget/config', 'get'],
      ['/widget/conversations', 'post'],
      ['/widget/conversations/{conv}/messages', 'post'],
      ['/widget/events', 'post'],
    ]) {
      const op = doc.paths[p][m]
      expect(op.tags, p).toEqual(['Widget and voice'])
      expect(op.security).toEqual([{ widgetToken: [] }])
      expect(op.responses['401'].description).toContain('invalid_widget_token')
      expect(op.responses['403'].description).toContain('origin_not_allowed')
      if (m === 'post') {
        expect(op.parameters.map((x: any) => x.name)).toContain('Idempotency-Key')
        expect(op.responses['409'].description).toContain('idempotency_key_reused')
      }
    }
    const config = doc.paths['/widget/config'].get.responses['200'].content['application/json'].schema
    expect(config.required).toEqual(expect.arrayContaining(['appearance', 'greeting']))
    expect(Object.keys(config.properties.appearance.properties)).toContain('primary_color')
    const created = doc.paths['/widget/conversations'].post.responses['201'].content['application/json'].schema
    expect(created.required).toContain('appearance')
    expect(doc.paths['/widget/conversations/{conv}/messages'].post.responses['403'].description).toContain(
      'invalid_visitor_token',
    )
    expect(doc.components.securitySchemes.widgetToken).toMatchObject({ in: 'header', name: 'X-Svc-Widget-Token' })
  })

  it('keeps API credentials and widget credentials apart', async () => {
    verifies('widget.tokens')
    const withKey = await start({ headers: { authorization: `Bearer ${t.key}` } })
    expect(withKey.status).toBe(401)
    expect(withKey.body.error.code).toBe('invalid_widget_token')
    expect(withKey.body.error.message).toMatch(/API keys are not accepted/)
    const keyOnly = await start({ token: null, headers: { authorization: `Bearer ${t.key}` } })
    expect(keyOnly.status).toBe(401)

    const c = await start()
    for (const bearer of [token, c.body.visitor_token]) {
      const r = await fetch(`${base}/conversations`, {
        headers: { authorization: `Bearer ${bearer}`, 'x-forwarded-for': freshIp() },
      })
      expect(r.status).toBe(401)
      expect((await r.json()).error.code).toBe('invalid_credentials')
      const h = await fetch(`${base}/agents/${agentId}`, {
        headers: { 'x-svc-widget-token': token, origin: ORIGIN, 'x-forwarded-for': freshIp() },
      })
      expect(h.status).toBe(401)
      expect(h.headers.get('access-control-allow-origin')).toBeNull()
    }
  })
})
