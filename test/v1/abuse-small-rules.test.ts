// Issue 30, the "Small rules" row of Security rules (Low findings 3, 4, 5 and 8) over HTTP:
// - a partner key on a suspended member's account (shared server);
// - /widget-demo off unless SVC_WIDGET_DEMO=1, and a server started without HOST listening on 127.0.0.1 only,
//   on a server of this file's own that also places calls through a fake Twilio (SVC_TELEPHONY=twilio) so that
//   a provider refusal shows what failure_reason says;
// - SVC_RATE_LIMITS and PATCH /admin/config with the widget and OAuth limiters, on another server of its own.
// Low 7 (speech audio rates) is test/unit/abuse-small-rules.test.ts.
import { connect } from 'node:net'
import { networkInterfaces } from 'node:os'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, expectError, uniqueEmail, type Api } from '../helpers/api'
import { startSeededServer, type SeededServer } from '../helpers/agents'
import { startFakeTwilio, type FakeTwilio } from '../helpers/fake-twilio'
import { registerClient } from '../helpers/oauth'
import { freePort, startServer, type TestServer } from '../helpers/server'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const base = inject('base')
const master = createApi(base, inject('masterKey'))

/** Resolves true when a TCP connection to host:port opens, false when it is refused or times out. */
const connects = (host: string, port: number) =>
  new Promise<boolean>((done) => {
    const socket = connect({ host, port, timeout: 2000 })
    socket.once('connect', () => {
      socket.destroy()
      done(true)
    })
    socket.once('timeout', () => {
      socket.destroy()
      done(false)
    })
    socket.once('error', () => done(false))
  })

/** An address of this machine that is not loopback (IPv4 first), or null when it has none. */
function otherInterface(): string | null {
  const all = Object.values(networkInterfaces()).flatMap((list) => list ?? [])
  const external = all.filter((a) => !a.internal && !a.address.startsWith('fe80:'))
  return (external.find((a) => a.family === 'IPv4') ?? external[0])?.address ?? null
}

describe('a partner key on a suspended member (Low 3)', () => {
  let partner: Tenant
  let p: Api

  beforeAll(async () => {
    partner = await createTenant(master, { scopes: ['accounts:read'] })
    const key = await master.post(`/users/${partner.userId}/credentials`, {
      name: 'partner',
      scopes: [
        'partners:manage',
        'accounts:read',
        'accounts:write',
        'usage:read',
        'agents:read',
        'conversations:read',
        'credentials:manage',
      ],
    })
    expect(key.status, key.text).toBe(201)
    p = createApi(base, key.body.secret)
  })

  const addMember = async () => {
    const r = await p.post('/partners/members', { email: uniqueEmail('member'), plan: 'starter' })
    expect(r.status, r.text).toBe(201)
    return r.body as { user_id: string; account_id: string }
  }

  it('refuses the partner key with 403 account_suspended on every way of naming the account; resuming lets it in', async () => {
    verifies('abuse.small.partner-suspended-member')
    const member = await addMember()
    const other = await addMember()
    const acc = member.account_id
    const asMember = { headers: { 'x-svc-account': acc } }
    // Before: the partner reads and writes its member's account.
    expect((await p.get(`/accounts/${acc}`)).status).toBe(200)
    expect((await p.get('/conversations', asMember)).status).toBe(200)
    expect((await p.get(`/conversations?account_id=${acc}`)).status).toBe(200)

    const s = await master.patch(`/users/${member.user_id}`, { status: 'suspended' })
    expect(s.status, s.text).toBe(200)
    const refused = [
      await p.get(`/accounts/${acc}`),
      await p.patch(`/accounts/${acc}`, { name: 'Renamed by the partner' }),
      await p.get(`/accounts/${acc}/limits`),
      await p.get(`/accounts/${acc}/usage`),
      await p.get(`/accounts/${acc}/agents`),
      await p.get('/conversations', asMember),
      await p.get(`/conversations?account_id=${acc}`),
      await p.patch(`/users/${member.user_id}`, { password: 'a new password for you' }),
      await p.post(`/users/${member.user_id}/credentials`, { name: 'sneaky', scopes: ['agents:read'] }),
      await p.post(`/users/${member.user_id}/login-links`, {}),
    ]
    for (const r of refused) expectError(r, 403, 'account_suspended')
    // The write did not happen.
    const read = await master.get(`/accounts/${acc}`)
    expect(read.body.name).not.toBe('Renamed by the partner')
    // The partner's own account and its other member are untouched; the member is still readable as a member.
    expect((await p.get(`/accounts/${partner.accountId}`)).status).toBe(200)
    expect((await p.get(`/accounts/${other.account_id}`)).status).toBe(200)
    expect((await p.get('/conversations', { headers: { 'x-svc-account': other.account_id } })).status).toBe(200)
    const asMemberRead = await p.get(`/partners/members/${member.user_id}`)
    expect(asMemberRead.status, asMemberRead.text).toBe(200)
    expect(asMemberRead.body.status).toBe('suspended')

    // Resumed: the same key reaches the account again on the next request.
    expect((await master.patch(`/users/${member.user_id}`, { status: 'active' })).status).toBe(200)
    expect((await p.get(`/accounts/${acc}`)).status).toBe(200)
    expect((await p.get('/conversations', asMember)).status).toBe(200)
  })
})

describe('a server started without HOST, with a fake Twilio (Low 4, Low 5)', () => {
  let fake: FakeTwilio
  let seeded: SeededServer<{ t: Tenant }>
  let server: TestServer
  let t: Api
  let agentId: string
  let port: number
  const suffix = String(1000 + (process.pid % 8000)).padStart(4, '0')

  beforeAll(async () => {
    fake = await startFakeTwilio()
    port = await freePort()
    seeded = await startSeededServer({
      env: {
        // Neither HOST nor NITRO_HOST: the node-server entry picks the address itself. No SVC_WIDGET_DEMO.
        HOST: undefined as unknown as string,
        NITRO_HOST: undefined as unknown as string,
        PORT: String(port),
        SVC_PUBLIC_URL: `http://127.0.0.1:${port}`,
        SVC_TELEPHONY: 'twilio',
        TWILIO_API_BASE_URL: fake.url,
        TWILIO_ACCOUNT_SID: fake.accountSid,
        TWILIO_AUTH_TOKEN: fake.authToken,
        SVC_RATE_LIMITS: 'read=100000,write=100000,calls=100000',
      },
      prepare: async (m) => ({ t: await createTenant(m) }),
      agents: ({ t }) => [{ accountId: t.accountId, name: 'Caller', agentType: 'phone' }],
    })
    server = seeded.server
    agentId = seeded.agentIds[0]
    t = seeded.as(seeded.prepared.t.key)
    fake.own(`+1415557${suffix}`)
    const n = await t.post('/phone-numbers', { e164: `+1415557${suffix}`, agent_id: agentId })
    expect(n.status, n.text).toBe(201)
  })

  afterAll(async () => {
    await server?.stop('SIGKILL')
    await fake?.close()
  })

  it('listens on 127.0.0.1 only when neither HOST nor NITRO_HOST is set', async () => {
    verifies('abuse.small.listen-loopback')
    expect(server.logs.join('')).toContain(`Listening on http://127.0.0.1:${port}`)
    expect(await connects('127.0.0.1', port)).toBe(true)
    const elsewhere = otherInterface()
    if (elsewhere) expect(await connects(elsewhere, port), `${elsewhere}:${port}`).toBe(false)
    // IPv6 loopback is another socket: not listened on either.
    expect(await connects('::1', port)).toBe(false)
  })

  it('answers /widget-demo 404 not_found, as an unknown path, without SVC_WIDGET_DEMO=1', async () => {
    verifies('abuse.small.widget-demo-off')
    for (const path of ['/widget-demo', `/widget-demo?agent=${agentId}`, '/widget-demo?agent=agt_1']) {
      const r = await fetch(`${server.origin}${path}`)
      expect(r.status, path).toBe(404)
      expect(((await r.json()) as any).error.code, path).toBe('not_found')
    }
    const unknown = await fetch(`${server.origin}/no-such-page`)
    expect(unknown.status).toBe(404)
  })

  it('fails a call the provider refuses, or cannot be reached for, with a public failure_reason', async () => {
    verifies('abuse.small.failure-reason-public')
    const secrets = [fake.accountSid, fake.authToken, fake.url, '127.0.0.1', '2010-04-01', 'Accounts/', 'http']
    const place = async (to: string) => {
      const r = await t.post('/calls', { agent_id: agentId, to, role: 'a caller from the bakery' })
      expect(r.status, r.text).toBe(201)
      const call = (await t.get(`/calls/${r.body.call_id}`)).body
      expect(call.status).toBe('failed')
      expect(call.outcome).toBe('failed')
      return call.failure_reason as string
    }
    // Twilio answers an error that names the account's resource path, as its 404s do.
    fake.failNext(404, {
      code: 20404,
      message: `The requested resource /2010-04-01/Accounts/${fake.accountSid}/Calls.json was not found`,
      more_info: 'https://www.twilio.com/docs/errors/20404',
      status: 404,
    })
    const refused = await place('+14155550181')
    expect(refused).toMatch(/^provider_error: [A-Za-z].*\.$/)
    for (const s of secrets) expect(refused).not.toContain(s)
    // The detail is the operator's, in the server log, without the auth token.
    await expect.poll(() => server.logs.join(''), { timeout: 5000 }).toContain('(Twilio error 20404)')
    expect(server.logs.join('')).not.toContain(fake.authToken)

    // The provider is gone: the network error names Twilio's URL, which the tenant must not see either.
    await fake.close()
    const unreachable = await place('+14155550182')
    for (const s of secrets) expect(unreachable).not.toContain(s)
    expect(unreachable).toBe(refused)
  })
})

describe('SVC_RATE_LIMITS and /admin/config with the widget and OAuth limiters (Low 8)', () => {
  let server: TestServer
  let admin: Api

  beforeAll(async () => {
    server = await startServer({
      env: { SVC_RATE_LIMITS: 'read=100000,write=100000,widget_ip=5,widget_token=600,register=2,token=61,revoke=62' },
    })
    admin = createApi(server.base, server.masterKey)
  })

  afterAll(async () => {
    await server?.stop('SIGKILL')
  })

  /** Widget requests without a token from one client IP until one is not a 401: how many 401s came first. */
  async function widgetRequestsBefore429(ip: string, max: number) {
    for (let i = 0; i <= max; i++) {
      const r = await fetch(`${server.base}/widget/config`, { headers: { 'x-forwarded-for': ip } })
      if (r.status === 429) return i
      expect(r.status).toBe(401)
    }
    return -1
  }

  it('boots with them, shows them in GET /admin/config and applies them; PATCH /admin/config sets them', async () => {
    verifies('abuse.small.rate-limit-names')
    const cfg = await admin.get('/admin/config')
    expect(cfg.status, cfg.text).toBe(200)
    expect(cfg.body.rate_limits).toMatchObject({
      read: 100000,
      widget_ip: 5,
      widget_token: 600,
      register: 2,
      token: 61,
      revoke: 62,
    })
    // widget_ip=5: the sixth widget request from one address is 429 (before any token is looked at).
    expect(await widgetRequestsBefore429('203.0.113.71', 10)).toBe(5)
    // register=2: the third registration from one address is 429.
    const reg = { redirect_uris: ['http://127.0.0.1:53682/cb'], token_endpoint_auth_method: 'none' }
    expect((await registerClient(server.origin, reg, '203.0.113.72')).status).toBe(201)
    expect((await registerClient(server.origin, reg, '203.0.113.72')).status).toBe(201)
    expect((await registerClient(server.origin, reg, '203.0.113.72')).status).toBe(429)

    // The operator's overrides take the same names and act at once.
    const p = await admin.patch('/admin/config', { rate_limits: { widget_ip: 3, register: 1, widget_token: 900 } })
    expect(p.status, p.text).toBe(200)
    expect(p.body.rate_limits).toMatchObject({ widget_ip: 3, register: 1, widget_token: 900, token: 61 })
    expect(p.body.overrides.rate_limits).toEqual({ widget_ip: 3, register: 1, widget_token: 900 })
    expect(await widgetRequestsBefore429('203.0.113.73', 10)).toBe(3)
    expect((await registerClient(server.origin, reg, '203.0.113.74')).status).toBe(201)
    expect((await registerClient(server.origin, reg, '203.0.113.74')).status).toBe(429)
    expectError(await admin.patch('/admin/config', { rate_limits: { widget_iq: 3 } }), 400, 'unsupported_field')
    const cleared = await admin.patch('/admin/config', {
      rate_limits: { widget_ip: null, register: null, widget_token: null },
    })
    expect(cleared.body.rate_limits).toMatchObject({ widget_ip: 5, register: 2, widget_token: 600 })

    // A tenant's limits list the API classes only.
    const t = await createTenant(admin)
    const limits = await t.api.get(`/accounts/${t.accountId}/limits`)
    expect(limits.status, limits.text).toBe(200)
    expect(Object.keys(limits.body.rate_limits).sort()).toEqual([
      'audio',
      'backfill',
      'build',
      'calls',
      'chat',
      'metrics',
      'read',
      'write',
    ])
  })
})

describe('SVC_RATE_LIMITS naming no limiter (Low 8)', () => {
  it('stops the boot on a name that is no limiter, naming the variable and the names it takes', async () => {
    verifies('abuse.small.rate-limit-names')
    const failed = await startServer({ env: { SVC_RATE_LIMITS: 'read=100,sneeze=5' } }).then(
      async (s) => {
        await s.stop('SIGKILL')
        return null
      },
      (e: Error) => e,
    )
    expect(failed).toBeInstanceOf(Error)
    expect(failed!.message).toContain('SVC_RATE_LIMITS')
    expect(failed!.message).toContain('widget_ip')
  })
})
