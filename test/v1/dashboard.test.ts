// The dashboard origin over HTTP: password login and login links, the session cookie and header, and the
// session-authenticated /api/api-keys routes, which refuse API keys.
import { describe, expect, inject, it } from 'vitest'
import { createApi, err, uniqueEmail, type ApiResponse } from '../helpers/api'
import { verifies } from '../requirements'

const origin = inject('origin')
const master = inject('masterKey')
const api = createApi(inject('base'), master)
const dash = createApi(origin)

// This file's failed logins count against their own client IP, not the one every other file shares.
const ip = `192.0.2.${(process.pid % 200) + 20}`
const h = (extra: Record<string, string> = {}) => ({ 'x-forwarded-for': ip, ...extra })
const asSession = (token: string) => ({ headers: h({ authorization: `Session ${token}` }) })
const asCookie = (token: string) => ({ headers: h({ cookie: `svc_session=${token}` }) })

interface TestUser { user_id: string; account_id: string; email: string; password: string }

async function newUser(tag: string): Promise<TestUser> {
  const email = uniqueEmail(tag)
  const password = `pw-${tag}-correct-horse`
  const r = await api.post('/users', { email, password })
  expect(r.status).toBe(201)
  return { user_id: r.body.user_id, account_id: r.body.account_id, email, password }
}

async function login(u: TestUser): Promise<string> {
  const r = await dash.post('/api/auth/login', { email: u.email, password: u.password }, { headers: h() })
  expect(r.status).toBe(200)
  return r.body.session_token
}

const cookieOf = (r: ApiResponse) => r.headers.getSetCookie().find((c) => c.startsWith('svc_session='))

describe('POST /api/auth/login', () => {
  it('answers a 12-hour session and sets the svc_session cookie; the token works as cookie and as Session header', async () => {
    verifies('dashboard.login', 'dashboard.session')
    const u = await newUser('login')
    const before = Date.now()
    const r = await dash.post('/api/auth/login', { email: u.email.toUpperCase(), password: u.password }, { headers: h() })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ user_id: u.user_id, account_id: u.account_id })
    expect(r.body.meta.environment).toBe('production')
    const token = r.body.session_token
    expect(token).toMatch(/^svc_ses_[A-Za-z0-9_-]{43}$/)
    const ttl = Date.parse(r.body.expires_at) - before
    expect(ttl).toBeGreaterThan(12 * 3_600_000 - 60_000)
    expect(ttl).toBeLessThan(12 * 3_600_000 + 60_000)
    const cookie = cookieOf(r)!
    expect(cookie.split('; ')[0]).toBe(`svc_session=${token}`)
    expect(cookie.split('; ')).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Lax', 'Path=/', 'Max-Age=43200']))
    // The test server is on 127.0.0.1: plain-HTTP development keeps the cookie without Secure.
    expect(cookie).not.toMatch(/Secure/)

    const viaCookie = await dash.get('/api/api-keys', asCookie(token))
    expect(viaCookie.status).toBe(200)
    expect(viaCookie.body).toMatchObject({ data: [], pagination: { has_more: false, next_cursor: null } })
    expect((await dash.get('/api/api-keys', asSession(token))).status).toBe(200)
  })

  it('sets Secure on the cookie when the host is not loopback', async () => {
    verifies('dashboard.login')
    const u = await newUser('secure')
    const r = await dash.post('/api/auth/login', { email: u.email, password: u.password }, { headers: h({ 'x-forwarded-host': 'dashboard.example.com' }) })
    expect(r.status).toBe(200)
    expect(cookieOf(r)!.split('; ')).toContain('Secure')
  })

  it('a wrong password and an unknown e-mail are the same 401 invalid_credentials, with no cookie', async () => {
    verifies('dashboard.login')
    const u = await newUser('wrong')
    const wrong = await dash.post('/api/auth/login', { email: u.email, password: 'not-the-password' }, { headers: h() })
    const unknown = await dash.post('/api/auth/login', { email: uniqueEmail('nobody'), password: u.password }, { headers: h() })
    for (const r of [wrong, unknown]) {
      expect(r.status).toBe(401)
      expect(err(r).code).toBe('invalid_credentials')
      expect(cookieOf(r)).toBeUndefined()
    }
    expect(err(wrong).message).toBe(err(unknown).message)
    expect(err(await dash.post('/api/auth/login', { email: u.email }, { headers: h() }))).toMatchObject({ code: 'validation_error', field: 'password' })
    expect(err(await dash.post('/api/auth/login', { email: u.email, password: u.password, remember: true }, { headers: h() }))).toMatchObject({ code: 'unsupported_field', field: 'remember' })
  })

  it('counts failures against the per-IP limit: past 20 a minute even the right password is 429', async () => {
    verifies('dashboard.login-failure-limit')
    const u = await newUser('limit')
    const limitedIp = `198.18.${process.pid % 250}.${(Date.now() % 200) + 20}`
    const attempt = (password: string, from = limitedIp) => dash.post('/api/auth/login', { email: u.email, password }, { headers: { 'x-forwarded-for': from } })
    for (let i = 0; i < 20; i++) expect((await attempt('wrong-password-123')).status).toBe(401)
    const limited = await attempt('wrong-password-123')
    expect(limited.status).toBe(429)
    expect(err(limited).code).toBe('rate_limited')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await attempt(u.password)).status).toBe(429)
    expect((await attempt(u.password, `${limitedIp.split('.').slice(0, 3).join('.')}.7`)).status).toBe(200)
  }, 90_000) // 22 scrypt runs, slow on a loaded two-core machine

  it('a suspended user cannot log in, and their open session stops working', async () => {
    verifies('dashboard.session')
    const u = await newUser('susp')
    const token = await login(u)
    expect((await api.patch(`/users/${u.user_id}`, { status: 'suspended' })).status).toBe(200)
    expect(err(await dash.get('/api/api-keys', asSession(token))).code).toBe('invalid_credentials')
    expect(err(await dash.post('/api/auth/login', { email: u.email, password: u.password }, { headers: h() })).code).toBe('invalid_credentials')
  })
})

describe('POST /api/auth/logout', () => {
  it('revokes the session and clears the cookie; logging out again is harmless', async () => {
    verifies('dashboard.session')
    const u = await newUser('logout')
    const a = await login(u)
    const b = await login(u)
    const out = await dash.post('/api/auth/logout', undefined, asSession(a))
    expect(out.status).toBe(204)
    expect(cookieOf(out)!.split('; ')).toEqual(expect.arrayContaining(['svc_session=', 'Max-Age=0']))
    const after = await dash.get('/api/api-keys', asSession(a))
    expect(after.status).toBe(401)
    expect(err(after).code).toBe('invalid_credentials')
    // Other sessions of the same user are untouched; the cookie form logs out too.
    expect((await dash.get('/api/api-keys', asCookie(b))).status).toBe(200)
    expect((await dash.post('/api/auth/logout', undefined, asCookie(b))).status).toBe(204)
    expect((await dash.get('/api/api-keys', asCookie(b))).status).toBe(401)
    expect((await dash.post('/api/auth/logout', undefined, asSession(a))).status).toBe(204)
  })
})

describe('session routes refuse API keys', () => {
  it('a personal key or the master key is 401 on /api/api-keys; no session is 401 missing_credentials', async () => {
    verifies('dashboard.refuses-api-keys', 'dashboard.session')
    const u = await newUser('refuse')
    const key = (await api.post(`/users/${u.user_id}/credentials`, { scopes: ['credentials:manage'] })).body.secret
    for (const bearer of [key, master]) {
      for (const r of [await dash.get('/api/api-keys', { key: bearer, headers: h() }), await dash.post('/api/api-keys', { scopes: ['agents:read'] }, { key: bearer, headers: h() })]) {
        expect(r.status).toBe(401)
        expect(err(r).code).toBe('invalid_credentials')
        expect(err(r).message).toMatch(/session/i)
      }
    }
    // A bearer key is refused even beside a valid session cookie.
    const token = await login(u)
    expect((await dash.get('/api/api-keys', { key, headers: h({ cookie: `svc_session=${token}` }) })).status).toBe(401)
    expect(err(await dash.get('/api/api-keys', { headers: h() })).code).toBe('missing_credentials')
    expect(err(await dash.get('/api/api-keys', asSession('svc_ses_' + 'x'.repeat(43)))).code).toBe('invalid_credentials')
    expect(err(await dash.get('/api/api-keys', asCookie('garbage'))).code).toBe('invalid_credentials')
  })
})

describe('/api/api-keys', () => {
  it('creates a personal live key for the logged-in user, ignoring account_id, account_ids and user_id', async () => {
    verifies('dashboard.api-keys', 'auth.personal-key-format')
    const u = await newUser('create')
    const other = await newUser('create-other')
    const token = await login(u)
    const r = await dash.post('/api/api-keys', {
      name: 'ci', scopes: ['agents:read', 'credentials:manage'], expires_in_days: 30,
      account_id: other.account_id, account_ids: [other.account_id, 'acc_1'], user_id: other.user_id,
    }, asSession(token))
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ name: 'ci', user_id: u.user_id, account_ids: [u.account_id], environment: 'live', status: 'active', scopes: ['agents:read', 'credentials:manage'] })
    expect(r.body.secret).toMatch(/^svc_sk_live_[A-Za-z0-9_-]{43}$/)
    expect(r.body.key_prefix).toBe(r.body.secret.slice(0, 24))
    // Malformed values of the ignored keys are ignored too.
    expect((await dash.post('/api/api-keys', { scopes: ['agents:read'], account_ids: 'nonsense', user_id: 5 }, asSession(token))).status).toBe(201)

    const list = await dash.get('/api/api-keys', asSession(token))
    expect(list.status).toBe(200)
    expect(list.body.data.map((k: any) => k.key_id)).toContain(r.body.key_id)
    expect(list.body.data.every((k: any) => k.user_id === u.user_id && !('secret' in k))).toBe(true)
    expect((await dash.get('/api/api-keys', asSession(await login(other)))).body.data).toEqual([])
  })

  it('refuses master-only and unknown scopes with 400 invalid_scope', async () => {
    verifies('dashboard.api-keys', 'auth.invalid_scope')
    const token = await login(await newUser('scopes'))
    for (const scopes of [['users:manage'], ['agents:read', 'audit:read'], ['admin:all_accounts'], ['nope:read'], []]) {
      const r = await dash.post('/api/api-keys', { scopes }, asSession(token))
      expect(err(r), JSON.stringify(scopes)).toMatchObject({ code: 'invalid_scope', field: 'scopes' })
    }
    expect(err(await dash.post('/api/api-keys', { scopes: ['agents:read'], environment: 'test' }, asSession(token))).code).toBe('validation_error')
  })

  it('a dashboard key works as a Bearer key; PATCH replaces scopes and the removal applies on the next request', async () => {
    verifies('dashboard.api-keys', 'dashboard.api-keys-patch', 'auth.scope')
    const u = await newUser('bearer')
    const token = await login(u)
    const created = (await dash.post('/api/api-keys', { scopes: ['credentials:manage', 'agents:read'] }, asSession(token))).body
    const bearer = createApi(inject('base'), created.secret)
    const listed = await bearer.get('/credentials')
    expect(listed.status).toBe(200)
    expect(listed.body.data.map((k: any) => k.key_id)).toContain(created.key_id)
    expect(listed.body.data.every((k: any) => k.user_id === u.user_id)).toBe(true)

    const patched = await dash.patch(`/api/api-keys/${created.key_id}`, { scopes: ['agents:read'] }, asSession(token))
    expect(patched.status).toBe(200)
    expect(patched.body).toMatchObject({ key_id: created.key_id, scopes: ['agents:read'], key_prefix: created.key_prefix, expires_at: created.expires_at })
    expect(patched.body).not.toHaveProperty('secret')
    const refused = await bearer.get('/credentials')
    expect(refused.status).toBe(403)
    expect(err(refused).code).toBe('insufficient_scope')
  })

  it('PATCH takes expires_in_days from now, needs at least one field, and checks the catalogue', async () => {
    verifies('dashboard.api-keys-patch')
    const token = await login(await newUser('patch'))
    const key = (await dash.post('/api/api-keys', { scopes: ['agents:read'] }, asSession(token))).body
    const before = Date.now()
    const r = await dash.patch(`/api/api-keys/${key.key_id}`, { expires_in_days: 10 }, asSession(token))
    expect(r.status).toBe(200)
    expect(Math.abs(Date.parse(r.body.expires_at) - before - 10 * 86_400_000)).toBeLessThan(60_000)
    expect(r.body.scopes).toEqual(['agents:read'])
    const both = await dash.patch(`/api/api-keys/${key.key_id}`, { scopes: ['kb:read', 'kb:write'], expires_in_days: 365 }, asSession(token))
    expect(both.body.scopes).toEqual(['kb:read', 'kb:write'])

    expect(err(await dash.patch(`/api/api-keys/${key.key_id}`, {}, asSession(token))).code).toBe('validation_error')
    expect(err(await dash.request('PATCH', `/api/api-keys/${key.key_id}`, asSession(token))).code).toBe('validation_error')
    expect(err(await dash.patch(`/api/api-keys/${key.key_id}`, { expires_in_days: 366 }, asSession(token)))).toMatchObject({ code: 'validation_error', field: 'expires_in_days' })
    expect(err(await dash.patch(`/api/api-keys/${key.key_id}`, { expires_in_days: 0 }, asSession(token)))).toMatchObject({ code: 'validation_error', field: 'expires_in_days' })
    expect(err(await dash.patch(`/api/api-keys/${key.key_id}`, { scopes: ['users:manage'] }, asSession(token)))).toMatchObject({ code: 'invalid_scope', field: 'scopes' })
    expect(err(await dash.patch(`/api/api-keys/${key.key_id}`, { scopes: ['nope:read'] }, asSession(token))).code).toBe('invalid_scope')
    expect(err(await dash.patch(`/api/api-keys/${key.key_id}`, { name: 'x' }, asSession(token)))).toMatchObject({ code: 'unsupported_field', field: 'name' })
    // The refused edits changed nothing.
    const now = (await dash.get('/api/api-keys', asSession(token))).body.data.find((k: any) => k.key_id === key.key_id)
    expect(now.scopes).toEqual(['kb:read', 'kb:write'])
  })

  it('rotates and revokes; a revoked key cannot be edited or rotated', async () => {
    verifies('dashboard.api-keys', 'dashboard.api-keys-patch')
    const token = await login(await newUser('rotate'))
    const key = (await dash.post('/api/api-keys', { name: 'r', scopes: ['agents:read'] }, asSession(token))).body
    const rotated = await dash.post(`/api/api-keys/${key.key_id}/rotate`, undefined, asSession(token))
    expect(rotated.status).toBe(201)
    expect(rotated.body).toMatchObject({ rotated_from: key.key_id, scopes: ['agents:read'], name: 'r' })
    expect(rotated.body.secret).toMatch(/^svc_sk_live_/)
    expect(rotated.body.secret).not.toBe(key.secret)
    expect(rotated.body.grace_expires_at).toBeTypeOf('string')

    expect((await dash.delete(`/api/api-keys/${key.key_id}`, asSession(token))).status).toBe(204)
    expect((await dash.delete(`/api/api-keys/${key.key_id}`, asSession(token))).status).toBe(204)
    const revoked = (await dash.get('/api/api-keys', asSession(token))).body.data.find((k: any) => k.key_id === key.key_id)
    expect(revoked.status).toBe('revoked')
    expect((await createApi(inject('base'), key.secret).get('/credentials')).status).toBe(401)
    expect(err(await dash.patch(`/api/api-keys/${key.key_id}`, { scopes: ['agents:read'] }, asSession(token))).code).toBe('validation_error')
    expect(err(await dash.post(`/api/api-keys/${key.key_id}/rotate`, undefined, asSession(token))).code).toBe('validation_error')
  })

  it("another user's key is 404 on every route; a malformed id is 400 invalid_id", async () => {
    verifies('dashboard.api-keys', 'tenancy.isolation')
    const owner = await newUser('owner')
    const theirs = (await dash.post('/api/api-keys', { scopes: ['agents:read'] }, asSession(await login(owner)))).body
    const apiIssued = (await api.post(`/users/${owner.user_id}/credentials`, { scopes: ['agents:read'] })).body
    const token = await login(await newUser('intruder'))
    for (const id of [theirs.key_id, apiIssued.key_id, 'key_987654321']) {
      expect(err(await dash.patch(`/api/api-keys/${id}`, { scopes: ['agents:read'] }, asSession(token))).code).toBe('not_found')
      expect(err(await dash.post(`/api/api-keys/${id}/rotate`, undefined, asSession(token))).code).toBe('not_found')
      expect(err(await dash.delete(`/api/api-keys/${id}`, asSession(token))).code).toBe('not_found')
    }
    expect(err(await dash.delete('/api/api-keys/usr_1', asSession(token)))).toMatchObject({ code: 'invalid_id', field: 'id' })
    // The owner's key still authenticates (403 for scope, not 401) and kept its scopes.
    expect(err(await createApi(inject('base'), theirs.secret).get('/credentials')).code).toBe('insufficient_scope')
  })
})

describe('login links', () => {
  it('issues a 15-minute single-use link that opens a session in a browser; a second use is 401', async () => {
    verifies('dashboard.login-links', 'dashboard.session')
    const u = await newUser('link')
    const before = Date.now()
    const r = await api.post(`/users/${u.user_id}/login-links`)
    expect(r.status).toBe(201)
    expect(r.body.token).toMatch(/^svc_lnk_[A-Za-z0-9_-]{43}$/)
    expect(r.body.url.endsWith(`/api/auth/login-link?token=${r.body.token}`)).toBe(true)
    expect(Math.abs(Date.parse(r.body.expires_at) - before - 15 * 60_000)).toBeLessThan(60_000)

    const opened = await dash.get(`/api/auth/login-link?token=${r.body.token}`, { headers: h() })
    expect(opened.status).toBe(200)
    expect(opened.body).toMatchObject({ user_id: u.user_id, account_id: u.account_id })
    expect(cookieOf(opened)!.split('; ')[0]).toBe(`svc_session=${opened.body.session_token}`)
    expect((await dash.get('/api/api-keys', asCookie(opened.body.session_token))).status).toBe(200)

    for (const again of [await dash.get(`/api/auth/login-link?token=${r.body.token}`, { headers: h() }), await dash.post('/api/auth/login-link', { token: r.body.token }, { headers: h() })]) {
      expect(again.status).toBe(401)
      expect(err(again).code).toBe('invalid_credentials')
    }
  })

  it('POST redeems once even when raced; unknown and malformed tokens are 401', async () => {
    verifies('dashboard.login-links')
    const u = await newUser('race')
    const token = (await api.post(`/users/${u.user_id}/login-links`)).body.token
    const race = await Promise.all(Array.from({ length: 4 }, () => dash.post('/api/auth/login-link', { token }, { headers: h() })))
    expect(race.filter((r) => r.status === 200)).toHaveLength(1)
    expect(race.filter((r) => r.status === 401)).toHaveLength(3)
    expect(err(await dash.post('/api/auth/login-link', { token: 'svc_lnk_' + 'y'.repeat(43) }, { headers: h() })).code).toBe('invalid_credentials')
    expect(err(await dash.get('/api/auth/login-link?token=nope', { headers: h() })).code).toBe('invalid_credentials')
    expect(err(await dash.get('/api/auth/login-link', { headers: h() }))).toMatchObject({ code: 'validation_error', field: 'token' })
  })

  it('a personal key needs users:manage or partners:manage and may only name its own user', async () => {
    verifies('dashboard.login-links', 'auth.scope')
    const u = await newUser('partner')
    const other = await newUser('partner-other')
    const partner = createApi(inject('base'), (await api.post(`/users/${u.user_id}/credentials`, { scopes: ['partners:manage'] })).body.secret)
    const plain = createApi(inject('base'), (await api.post(`/users/${u.user_id}/credentials`, { scopes: ['agents:read'] })).body.secret)
    expect((await partner.post(`/users/${u.user_id}/login-links`)).status).toBe(201)
    expect(err(await partner.post(`/users/${other.user_id}/login-links`)).code).toBe('forbidden_account')
    expect(err(await plain.post(`/users/${u.user_id}/login-links`)).code).toBe('insufficient_scope')
    expect(err(await api.post('/users/usr_987654321/login-links')).code).toBe('not_found')
    expect(err(await api.post(`/users/${u.user_id}/login-links`, { ttl: 5 })).code).toBe('unsupported_field')
  })
})

describe('OpenAPI', () => {
  it('documents the dashboard routes under /api with the session schemes and the origin as server', async () => {
    verifies('openapi.document')
    const doc = (await createApi(inject('base')).get('/openapi.json')).body
    for (const [path, methods] of [['/api/api-keys', ['get', 'post']], ['/api/api-keys/{id}', ['patch', 'delete']], ['/api/api-keys/{id}/rotate', ['post']]] as const) {
      expect(doc.paths[path].servers).toEqual([{ url: expect.any(String), description: 'Dashboard origin' }])
      for (const m of methods) {
        expect(doc.paths[path][m].security, `${m} ${path}`).toEqual([{ sessionAuth: [] }, { sessionHeader: [] }])
        expect(doc.paths[path][m].responses['401']).toBeDefined()
      }
    }
    expect(doc.paths['/api/auth/login'].post.security).toEqual([])
    expect(doc.paths['/api/auth/login'].post.responses['401'].description).toContain('invalid_credentials')
    expect(doc.paths['/users/{usr}/login-links'].post['x-scope']).toBe('users:manage')
    expect(doc.components.securitySchemes.sessionAuth).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'svc_session' })
    expect(doc.components.securitySchemes.sessionHeader).toMatchObject({ type: 'http', scheme: 'Session' })
  })
})
