// The client IP (decisions "Client IP"): X-Forwarded-For is believed only from a trusted proxy. A server
// of its own trusts only 10.9.9.9, so the test client (loopback) is an ordinary direct client whose
// forged header must change nothing; the shared server keeps the default (loopback trusted).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, err, type Api } from '../helpers/api'
import { startServer, type TestServer } from '../helpers/server'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

let server: TestServer
let master: Api
let t: Tenant

beforeAll(async () => {
  server = await startServer({ env: { SVC_TRUSTED_PROXIES: '10.9.9.9', SVC_RATE_LIMITS: 'read=100000,write=100000' } })
  master = createApi(server.base, server.masterKey)
  t = await createTenant(master)
}, 240_000)
afterAll(async () => {
  await server?.stop('SIGKILL')
})

const forged = (ip: string, extra: Record<string, string> = {}) => ({ headers: { 'x-forwarded-for': ip, ...extra } })

/** The audit row of one request, found by its request id (rows are written in batches). */
async function auditIp(api: Api, keyId: string, requestId: string): Promise<string | null> {
  const row = await until(`audit row ${requestId}`, async () => {
    const r = await api.get(`/audit?credential_id=${keyId}&limit=100`)
    return (r.body.data as any[]).find((x) => x.request_id === requestId)
  })
  return row.ip
}

describe('X-Forwarded-For from a peer that is not a trusted proxy', () => {
  it('is ignored by ip_allowlist: a forged listed address is refused, the real socket address admitted', async () => {
    verifies('client-ip.trusted-proxies', 'auth.ip_allowlist')
    const listed = await master.post(`/users/${t.userId}/credentials`, {
      scopes: ['accounts:read'],
      ip_allowlist: ['198.51.100.7'],
    })
    const k = createApi(server.base, listed.body.secret)
    const r = await k.get(`/accounts/${t.accountId}`, forged('198.51.100.7'))
    expect(r.status).toBe(403)
    expect(err(r).code).toBe('ip_not_allowed')
    const loopback = await master.post(`/users/${t.userId}/credentials`, {
      scopes: ['accounts:read'],
      ip_allowlist: ['127.0.0.1'],
    })
    expect(
      (await createApi(server.base, loopback.body.secret).get(`/accounts/${t.accountId}`, forged('198.51.100.8')))
        .status,
    ).toBe(200)
  })

  it('is ignored by the audit row: it records the socket address', async () => {
    verifies('client-ip.trusted-proxies')
    const id = `ip-audit-${Date.now()}`
    expect((await t.api.get(`/accounts/${t.accountId}`, forged('203.0.113.9', { 'x-request-id': id }))).status).toBe(
      200,
    )
    expect(await auditIp(master, t.keyId, id)).toBe('127.0.0.1')
  })

  it('does not count as https for Strict-Transport-Security', async () => {
    verifies('client-ip.trusted-proxies', 'http.security-headers')
    expect(
      (await master.get('/health', { headers: { 'x-forwarded-proto': 'https' } })).headers.get(
        'strict-transport-security',
      ),
    ).toBeNull()
  })

  it('cannot spread failed authentications over many addresses: they all count against the socket address', async () => {
    verifies('client-ip.trusted-proxies', 'auth.ip-failure-limit')
    const anon = createApi(server.base, 'svc_sk_live_' + 'x'.repeat(43))
    const codes: number[] = []
    for (let i = 0; i < 22; i++) codes.push((await anon.get('/users', forged(`192.0.2.${i + 1}`))).status)
    expect(codes.slice(0, 20).every((c) => c === 401)).toBe(true)
    expect(codes.slice(20)).toEqual([429, 429])
  })
})

describe('X-Forwarded-For from a trusted proxy (default: loopback)', () => {
  it('is honoured for ip_allowlist and the audit row, as before', async () => {
    verifies('client-ip.trusted-proxies', 'auth.ip_allowlist')
    const base = inject('base')
    const shared = createApi(base, inject('masterKey'))
    const tt = await createTenant(shared)
    const listed = await shared.post(`/users/${tt.userId}/credentials`, {
      scopes: ['accounts:read'],
      ip_allowlist: ['198.51.100.7'],
    })
    const k = createApi(base, listed.body.secret)
    expect((await k.get(`/accounts/${tt.accountId}`, forged('198.51.100.7'))).status).toBe(200)
    expect(err(await k.get(`/accounts/${tt.accountId}`, forged('198.51.100.8'))).code).toBe('ip_not_allowed')
    const id = `ip-audit-trusted-${Date.now()}`
    expect(
      (await tt.api.get(`/accounts/${tt.accountId}`, forged('203.0.113.10, 10.0.0.1', { 'x-request-id': id }))).status,
    ).toBe(200)
    expect(await auditIp(shared, tt.keyId, id)).toBe('203.0.113.10')
  })
})

describe('SVC_PUBLIC_URL on https', () => {
  let https: TestServer
  beforeAll(async () => {
    await server.stop('SIGKILL')
    https = await startServer({ env: { SVC_PUBLIC_URL: 'https://svc.example.test' } })
  }, 240_000)
  afterAll(async () => {
    await https?.stop('SIGKILL')
  })

  it('sends Strict-Transport-Security on every response, errors included', async () => {
    verifies('http.security-headers')
    const anon = createApi(https.base)
    for (const r of [await anon.get('/health'), await anon.get('/nowhere'), await anon.get('/users')]) {
      expect(r.headers.get('strict-transport-security'), String(r.status)).toMatch(
        /^max-age=\d{8,}; includeSubDomains$/,
      )
      expect(r.headers.get('x-content-type-options')).toBe('nosniff')
    }
  })
})
