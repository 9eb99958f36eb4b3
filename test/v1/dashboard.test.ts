// The dashboard origin over HTTP: password login and login links, the session cookie and header, and the
// session-authenticated /api/api-keys routes, which refuse API keys.
import { createHash } from 'node:crypto'
import { describe, expect, inject, it, vi } from 'vitest'
import { createApi, err, uniqueEmail, type ApiResponse } from '../helpers/api'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

// Each login and each user creation runs scrypt N=2^17 (128 MiB, ~0.4 s on an idle core, many seconds on
// a loaded two-core machine), and this file runs dozens of them.
vi.setConfig({ testTimeout: 180_000 })

const origin = inject('origin')
const master = inject('masterKey')
const api = createApi(inject('base'), master)
const dash = createApi(origin)

// This file's failed logins count against their own client IP, not the one every other file shares.
const ip = `192.0.2.${(process.pid % 200) + 20}`
const h = (extra: Record<string, string> = {}) => ({ 'x-forwarded-for': ip, ...extra })
const asSession = (token: string) => ({ headers: h({ authorization: `Session ${token}` }) })
const asCookie = (token: string) => ({ headers: h({ cookie: `svc_session=${token}` }) })

interface TestUser {
  user_id: string
  account_id: string
  email: string
  password: string
}

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
    const r = await dash.post(
      '/api/auth/login',
      { email: u.email.toUpperCase(), password: u.password },
      { headers: h() },
    )
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
    const r = await dash.post(
      '/api/auth/login',
      { email: u.email, password: u.password },
      { headers: h({ 'x-forwarded-host': 'dashboard.example.com' }) },
    )
    expect(r.status).toBe(200)
    expect(cookieOf(r)!.split('; ')).toContain('Secure')
  })

  it('a wrong password and an unknown e-mail are the same 401 invalid_credentials, with no cookie', async () => {
    verifies('dashboard.login')
    const u = await newUser('wrong')
    const wrong = await dash.post('/api/auth/login', { email: u.email, password: 'not-the-password' }, { headers: h() })
    const unknown = await dash.post(
      '/api/auth/login',
      { email: uniqueEmail('nobody'), password: u.password },
      { headers: h() },
    )
    for (const r of [wrong, unknown]) {
      expect(r.status).toBe(401)
      expect(err(r).code).toBe('invalid_credentials')
      expect(cookieOf(r)).toBeUndefined()
    }
    expect(err(wrong).message).toBe(err(unknown).message)
    expect(err(await dash.post('/api/auth/login', { email: u.email }, { headers: h() }))).toMatchObject({
      code: 'validation_error',
      field: 'password',
    })
    expect(
      err(
        await dash.post('/api/auth/login', { email: u.email, password: u.password, remember: true }, { headers: h() }),
      ),
    ).toMatchObject({ code: 'unsupported_field', field: 'remember' })
  })

  it('counts failures against the per-IP limit: past 20 a minute even the right password is 429', async () => {
    verifies('dashboard.login-failure-limit')
    const u = await newUser('limit')
    const limitedIp = `198.18.${process.pid % 250}.${(Date.now() % 200) + 20}`
    const attempt = (password: string, from = limitedIp) =>
      dash.post('/api/auth/login', { email: u.email, password }, { headers: { 'x-forwarded-for': from } })
    // At once, so the 20 failures land inside the limiter's minute however slow scrypt N=2^17 runs here.
    const failures = await Promise.all(Array.from({ length: 20 }, () => attempt('wrong-password-123')))
    expect(failures.map((r) => r.status)).toEqual(Array(20).fill(401))
    const limited = await attempt('wrong-password-123')
    expect(limited.status).toBe(429)
    expect(err(limited).code).toBe('rate_limited')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await attempt(u.password)).status).toBe(429)
    expect((await attempt(u.password, `${limitedIp.split('.').slice(0, 3).join('.')}.7`)).status).toBe(200)
  }, 300_000) // 22 scrypt runs, slow on a loaded two-core machine

  it('a suspended user cannot log in; their open session is 403 account_suspended until resumed', async () => {
    verifies('dashboard.session', 'security.suspension')
    const u = await newUser('susp')
    const token = await login(u)
    expect((await api.patch(`/users/${u.user_id}`, { status: 'suspended' })).status).toBe(200)
    const refused = await dash.get('/api/api-keys', asSession(token))
    expect(refused.status).toBe(403)
    expect(err(refused).code).toBe('account_suspended')
    expect(
      err(await dash.post('/api/auth/login', { email: u.email, password: u.password }, { headers: h() })).code,
    ).toBe('invalid_credentials')
    expect((await api.patch(`/users/${u.user_id}`, { status: 'active' })).status).toBe(200)
    expect((await dash.get('/api/api-keys', asSession(token))).status).toBe(200)
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
      for (const r of [
        await dash.get('/api/api-keys', { key: bearer, headers: h() }),
        await dash.post('/api/api-keys', { scopes: ['agents:read'] }, { key: bearer, headers: h() }),
      ]) {
        expect(r.status).toBe(401)
        expect(err(r).code).toBe('invalid_credentials')
        expect(err(r).message).toMatch(/session/i)
      }
    }
    // A bearer key is refused even beside a valid session cookie.
    const token = await login(u)
    expect((await dash.get('/api/api-keys', { key, headers: h({ cookie: `svc_session=${token}` }) })).status).toBe(401)
    expect(err(await dash.get('/api/api-keys', { headers: h() })).code).toBe('missing_credentials')
    expect(err(await dash.get('/api/api-keys', asSession('svc_ses_' + 'x'.repeat(43)))).code).toBe(
      'invalid_credentials',
    )
    expect(err(await dash.get('/api/api-keys', asCookie('garbage'))).code).toBe('invalid_credentials')
  })
})

describe('/api/api-keys', () => {
  it('creates a personal live key for the logged-in user, ignoring account_id, account_ids and user_id', async () => {
    verifies('dashboard.api-keys', 'auth.personal-key-format')
    const u = await newUser('create')
    const other = await newUser('create-other')
    const token = await login(u)
    const r = await dash.post(
      '/api/api-keys',
      {
        name: 'ci',
        scopes: ['agents:read', 'credentials:manage'],
        expires_in_days: 30,
        account_id: other.account_id,
        account_ids: [other.account_id, 'acc_1'],
        user_id: other.user_id,
      },
      asSession(token),
    )
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({
      name: 'ci',
      user_id: u.user_id,
      account_ids: [u.account_id],
      environment: 'live',
      status: 'active',
      scopes: ['agents:read', 'credentials:manage'],
    })
    expect(r.body.secret).toMatch(/^svc_sk_live_[A-Za-z0-9_-]{43}$/)
    expect(r.body.key_prefix).toBe(r.body.secret.slice(0, 24))
    // Malformed values of the ignored keys are ignored too.
    expect(
      (
        await dash.post(
          '/api/api-keys',
          { scopes: ['agents:read'], account_ids: 'nonsense', user_id: 5 },
          asSession(token),
        )
      ).status,
    ).toBe(201)

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
    expect(
      err(await dash.post('/api/api-keys', { scopes: ['agents:read'], environment: 'test' }, asSession(token))).code,
    ).toBe('validation_error')
  })

  it('a dashboard key works as a Bearer key; PATCH replaces scopes and the removal applies on the next request', async () => {
    verifies('dashboard.api-keys', 'dashboard.api-keys-patch', 'auth.scope')
    const u = await newUser('bearer')
    const token = await login(u)
    const created = (
      await dash.post('/api/api-keys', { scopes: ['credentials:manage', 'agents:read'] }, asSession(token))
    ).body
    const bearer = createApi(inject('base'), created.secret)
    const listed = await bearer.get('/credentials')
    expect(listed.status).toBe(200)
    expect(listed.body.data.map((k: any) => k.key_id)).toContain(created.key_id)
    expect(listed.body.data.every((k: any) => k.user_id === u.user_id)).toBe(true)

    const patched = await dash.patch(`/api/api-keys/${created.key_id}`, { scopes: ['agents:read'] }, asSession(token))
    expect(patched.status).toBe(200)
    expect(patched.body).toMatchObject({
      key_id: created.key_id,
      scopes: ['agents:read'],
      key_prefix: created.key_prefix,
      expires_at: created.expires_at,
    })
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
    const both = await dash.patch(
      `/api/api-keys/${key.key_id}`,
      { scopes: ['kb:read', 'kb:write'], expires_in_days: 365 },
      asSession(token),
    )
    expect(both.body.scopes).toEqual(['kb:read', 'kb:write'])

    expect(err(await dash.patch(`/api/api-keys/${key.key_id}`, {}, asSession(token))).code).toBe('validation_error')
    expect(err(await dash.request('PATCH', `/api/api-keys/${key.key_id}`, asSession(token))).code).toBe(
      'validation_error',
    )
    expect(
      err(await dash.patch(`/api/api-keys/${key.key_id}`, { expires_in_days: 366 }, asSession(token))),
    ).toMatchObject({ code: 'validation_error', field: 'expires_in_days' })
    expect(
      err(await dash.patch(`/api/api-keys/${key.key_id}`, { expires_in_days: 0 }, asSession(token))),
    ).toMatchObject({ code: 'validation_error', field: 'expires_in_days' })
    expect(
      err(await dash.patch(`/api/api-keys/${key.key_id}`, { scopes: ['users:manage'] }, asSession(token))),
    ).toMatchObject({ code: 'invalid_scope', field: 'scopes' })
    expect(err(await dash.patch(`/api/api-keys/${key.key_id}`, { scopes: ['nope:read'] }, asSession(token))).code).toBe(
      'invalid_scope',
    )
    expect(err(await dash.patch(`/api/api-keys/${key.key_id}`, { name: 'x' }, asSession(token)))).toMatchObject({
      code: 'unsupported_field',
      field: 'name',
    })
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
    const revoked = (await dash.get('/api/api-keys', asSession(token))).body.data.find(
      (k: any) => k.key_id === key.key_id,
    )
    expect(revoked.status).toBe('revoked')
    expect((await createApi(inject('base'), key.secret).get('/credentials')).status).toBe(401)
    expect(
      err(await dash.patch(`/api/api-keys/${key.key_id}`, { scopes: ['agents:read'] }, asSession(token))).code,
    ).toBe('validation_error')
    expect(err(await dash.post(`/api/api-keys/${key.key_id}/rotate`, undefined, asSession(token))).code).toBe(
      'validation_error',
    )
  })

  it("another user's key is 404 on every route; a malformed id is 400 invalid_id", async () => {
    verifies('dashboard.api-keys', 'tenancy.isolation')
    const owner = await newUser('owner')
    const theirs = (await dash.post('/api/api-keys', { scopes: ['agents:read'] }, asSession(await login(owner)))).body
    const apiIssued = (await api.post(`/users/${owner.user_id}/credentials`, { scopes: ['agents:read'] })).body
    const token = await login(await newUser('intruder'))
    for (const id of [theirs.key_id, apiIssued.key_id, 'key_987654321']) {
      expect(err(await dash.patch(`/api/api-keys/${id}`, { scopes: ['agents:read'] }, asSession(token))).code).toBe(
        'not_found',
      )
      expect(err(await dash.post(`/api/api-keys/${id}/rotate`, undefined, asSession(token))).code).toBe('not_found')
      expect(err(await dash.delete(`/api/api-keys/${id}`, asSession(token))).code).toBe('not_found')
    }
    expect(err(await dash.delete('/api/api-keys/usr_1', asSession(token)))).toMatchObject({
      code: 'invalid_id',
      field: 'id',
    })
    // The owner's key still authenticates (403 for scope, not 401) and kept its scopes.
    expect(err(await createApi(inject('base'), theirs.secret).get('/credentials')).code).toBe('insufficient_scope')
  })
})

describe('login links', () => {
  it('issues a 15-minute single-use link whose page asks to confirm; only the form POST spends it; a second use is 401', async () => {
    verifies('dashboard.login-links', 'dashboard.session', 'security.login-link-confirm')
    const u = await newUser('link')
    const before = Date.now()
    const r = await api.post(`/users/${u.user_id}/login-links`)
    expect(r.status).toBe(201)
    expect(r.body.token).toMatch(/^svc_lnk_[A-Za-z0-9_-]{43}$/)
    expect(r.body.url.endsWith(`/api/auth/login-link?token=${r.body.token}`)).toBe(true)
    expect(Math.abs(Date.parse(r.body.expires_at) - before - 15 * 60_000)).toBeLessThan(60_000)

    // What a mail scanner or prefetcher does: open the url, more than once. Nothing is spent.
    for (let i = 0; i < 2; i++) {
      const page = await fetch(`${origin}/api/auth/login-link?token=${r.body.token}`, { headers: h() })
      expect(page.status).toBe(200)
      expect(page.headers.get('content-type')).toMatch(/^text\/html/)
      expect(page.headers.get('cache-control')).toBe('no-store')
      expect(page.headers.get('referrer-policy')).toBe('no-referrer')
      expect(page.headers.get('x-frame-options')).toBe('DENY')
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
      expect(page.headers.getSetCookie()).toEqual([])
      const html = await page.text()
      expect(html).toMatch(/<form method="post" action="\/api\/auth\/login-link" enctype="multipart\/form-data">/)
      expect(html).toContain(`name="token" value="${r.body.token}"`)
      expect(html).not.toMatch(/<script|<img|<link /)
    }

    // The page's form, as a browser submits it.
    const form = new FormData()
    form.set('token', r.body.token)
    const res = await fetch(`${origin}/api/auth/login-link`, {
      method: 'POST',
      body: form,
      headers: h({ 'sec-fetch-site': 'same-origin' }),
    })
    expect(res.status).toBe(200)
    const opened = (await res.json()) as any
    expect(opened).toMatchObject({ user_id: u.user_id, account_id: u.account_id })
    expect(
      res.headers
        .getSetCookie()
        .find((c) => c.startsWith('svc_session='))!
        .split('; ')[0],
    ).toBe(`svc_session=${opened.session_token}`)
    expect((await dash.get('/api/api-keys', asCookie(opened.session_token))).status).toBe(200)

    const again = await dash.post('/api/auth/login-link', { token: r.body.token }, { headers: h() })
    expect(again.status).toBe(401)
    expect(err(again).code).toBe('invalid_credentials')
  })

  it('the confirm form refuses a cross-site submission and a form without a token', async () => {
    verifies('security.login-link-confirm')
    const u = await newUser('link-csrf')
    const token = (await api.post(`/users/${u.user_id}/login-links`)).body.token
    const form = new FormData()
    form.set('token', token)
    const cross = await fetch(`${origin}/api/auth/login-link`, {
      method: 'POST',
      body: form,
      headers: h({ 'sec-fetch-site': 'cross-site' }),
    })
    expect(cross.status).toBe(403)
    expect(cross.headers.getSetCookie()).toEqual([])
    const empty = new FormData()
    empty.set('other', 'x')
    const missing = await fetch(`${origin}/api/auth/login-link`, { method: 'POST', body: empty, headers: h() })
    expect(missing.status).toBe(400)
    expect(((await missing.json()) as any).error.field).toBe('token')
    // Neither spent the link.
    expect((await dash.post('/api/auth/login-link', { token }, { headers: h() })).status).toBe(200)
  })

  it('POST redeems once even when raced; unknown and malformed tokens are 401', async () => {
    verifies('dashboard.login-links')
    const u = await newUser('race')
    const token = (await api.post(`/users/${u.user_id}/login-links`)).body.token
    const race = await Promise.all(
      Array.from({ length: 4 }, () => dash.post('/api/auth/login-link', { token }, { headers: h() })),
    )
    expect(race.filter((r) => r.status === 200)).toHaveLength(1)
    expect(race.filter((r) => r.status === 401)).toHaveLength(3)
    expect(
      err(await dash.post('/api/auth/login-link', { token: 'svc_lnk_' + 'y'.repeat(43) }, { headers: h() })).code,
    ).toBe('invalid_credentials')
    expect(err(await dash.get('/api/auth/login-link?token=nope', { headers: h() })).code).toBe('invalid_credentials')
    expect(err(await dash.get('/api/auth/login-link', { headers: h() }))).toMatchObject({
      code: 'validation_error',
      field: 'token',
    })
  })

  it('a partners:manage key may not issue a link for its own user nor for a non-member; other keys need the scope', async () => {
    verifies('dashboard.login-links', 'auth.scope', 'security.login-link-issuer')
    const u = await newUser('partner')
    const other = await newUser('partner-other')
    const partner = createApi(
      inject('base'),
      (await api.post(`/users/${u.user_id}/credentials`, { scopes: ['partners:manage'] })).body.secret,
    )
    const plain = createApi(
      inject('base'),
      (await api.post(`/users/${u.user_id}/credentials`, { scopes: ['agents:read'] })).body.secret,
    )
    // Its own user: a link would open a session holding every scope the key lacks.
    const own = await partner.post(`/users/${u.user_id}/login-links`)
    expect(own.status).toBe(403)
    expect(err(own).code).toBe('forbidden_account')
    expect(own.body.token).toBeUndefined()
    expect(err(await partner.post(`/users/${other.user_id}/login-links`)).code).toBe('forbidden_account')
    // An unknown user answers like a non-member, so the answer does not reveal which ids exist.
    expect(err(await partner.post('/users/usr_987654321/login-links')).code).toBe('forbidden_account')
    expect(err(await plain.post(`/users/${u.user_id}/login-links`)).code).toBe('insufficient_scope')
    expect(err(await api.post('/users/usr_987654321/login-links')).code).toBe('not_found')
    expect(err(await api.post(`/users/${u.user_id}/login-links`, { ttl: 5 })).code).toBe('unsupported_field')
  })

  it('a master-key link opens a session holding every grantable scope and no ip_allowlist', async () => {
    verifies('security.session-ceiling')
    const u = await newUser('master-link')
    const token = (await api.post(`/users/${u.user_id}/login-links`)).body.token
    const opened = await dash.post('/api/auth/login-link', { token }, { headers: h() })
    expect(opened.status).toBe(200)
    const all = [
      'credentials:manage',
      'accounts:read',
      'agents:read',
      'agents:write',
      'kb:write',
      'webhooks:manage',
      'partners:manage',
    ]
    const key = await dash.post(
      '/api/api-keys',
      { scopes: all },
      { headers: { 'x-forwarded-for': '203.0.113.99', authorization: `Session ${opened.body.session_token}` } },
    )
    expect(key.status).toBe(201)
    expect(key.body.ip_allowlist).toEqual([])
  })
})

describe('audit of the dashboard', () => {
  it('audits logins (failed too), link redemptions, logouts and every /api write under the session id', async () => {
    verifies('security.dashboard-audit', 'audit.rows')
    const u = await newUser('audited')
    const sesId = (token: string) => 'ses_' + createHash('sha256').update(token).digest('hex').slice(0, 16)
    const from = new Date(Date.now() - 1000).toISOString()
    const ua = `audit-ua-${Date.now()}`
    const withUa = (extra: Record<string, string> = {}) => ({ headers: h({ 'user-agent': ua, ...extra }) })
    const bad = await dash.post('/api/auth/login', { email: u.email, password: 'wrong-password!!' }, withUa())
    expect(bad.status).toBe(401)
    const good = await dash.post('/api/auth/login', { email: u.email, password: u.password }, withUa())
    const session = good.body.session_token
    const created = await dash.post(
      '/api/api-keys',
      { name: 'audited', scopes: ['agents:read'] },
      withUa({ authorization: `Session ${session}` }),
    )
    expect(created.status).toBe(201)
    const link = (await api.post(`/users/${u.user_id}/login-links`)).body.token
    const viaLink = await dash.post('/api/auth/login-link', { token: link }, withUa())
    expect(
      (await dash.post('/api/auth/logout', undefined, withUa({ authorization: `Session ${session}` }))).status,
    ).toBe(204)

    const rows = async (credentialId: string) =>
      (await api.get(`/audit?credential_id=${credentialId}&from=${encodeURIComponent(from)}`)).body.data as any[]
    let mine: any[] = []
    await until('session audit rows', async () => {
      mine = await rows(sesId(session))
      return mine.length >= 3
    })
    expect(mine.map((r) => `${r.method} ${r.path} ${r.status_code}`).sort()).toEqual([
      'POST /api/api-keys 201',
      'POST /api/auth/login 200',
      'POST /api/auth/logout 204',
    ])
    for (const r of mine)
      expect(r).toMatchObject({
        credential_type: 'session',
        account_ids: [u.account_id],
        cross_account: false,
        user_agent: ua,
        ip,
      })
    let linked: any[] = []
    await until('link audit row', async () => {
      linked = await rows(sesId(viaLink.body.session_token))
      return linked.length >= 1
    })
    expect(linked[0]).toMatchObject({
      credential_type: 'session',
      method: 'POST',
      path: '/api/auth/login-link',
      status_code: 200,
    })
    // The failed login has no credential, like a failed API authentication.
    let failed: any[] = []
    await until('failed login audit row', async () => {
      failed = (
        (await api.get(`/audit?status_code=401&from=${encodeURIComponent(from)}&limit=100`)).body.data as any[]
      ).filter((r) => r.user_agent === ua)
      return failed.length >= 1
    })
    expect(failed[0]).toMatchObject({
      credential_type: null,
      credential_id: null,
      path: '/api/auth/login',
      error_code: 'invalid_credentials',
    })
  })
})

describe('OpenAPI', () => {
  it('documents the dashboard routes under /api with the session schemes and the origin as server', async () => {
    verifies('openapi.document')
    const doc = (await createApi(inject('base')).get('/openapi.json')).body
    for (const [path, methods] of [
      ['/api/api-keys', ['get', 'post']],
      ['/api/api-keys/{id}', ['patch', 'delete']],
      ['/api/api-keys/{id}/rotate', ['post']],
    ] as const) {
      expect(doc.paths[path].servers).toEqual([{ url: expect.any(String), description: 'Dashboard origin' }])
      for (const m of methods) {
        expect(doc.paths[path][m].security, `${m} ${path}`).toEqual([{ sessionAuth: [] }, { sessionHeader: [] }])
        expect(doc.paths[path][m].responses['401']).toBeDefined()
      }
    }
    expect(doc.paths['/api/auth/login'].post.security).toEqual([])
    expect(doc.paths['/api/auth/login'].post.responses['401'].description).toContain('invalid_credentials')
    expect(doc.paths['/users/{usr}/login-links'].post['x-scope']).toBe('users:manage')
    expect(doc.components.securitySchemes.sessionAuth).toMatchObject({
      type: 'apiKey',
      in: 'cookie',
      name: 'svc_session',
    })
    expect(doc.components.securitySchemes.sessionHeader).toMatchObject({ type: 'http', scheme: 'Session' })
  })
})
