// Personal keys over HTTP: issue, format, scopes, account_ids, ip_allowlist, expiry warning, rotation,
// revocation, and the lists.
import { createHash } from 'node:crypto'
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, err, uniqueEmail } from '../helpers/api'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const base = inject('base')
const master = createApi(base, inject('masterKey'))
let t: Tenant

beforeAll(async () => {
  t = await createTenant(master)
})

describe('issuing personal keys', () => {
  it('answers 201 with svc_sk_live_ + 43 base64url characters, shown once; key_prefix is its first 24 characters', async () => {
    verifies('credentials.create', 'auth.personal-key-format')
    const r = await master.post(`/users/${t.userId}/credentials`, {
      name: 'ci',
      scopes: ['accounts:read'],
      expires_in_days: 90,
    })
    expect(r.status).toBe(201)
    expect(r.body.secret).toMatch(/^svc_sk_live_[A-Za-z0-9_-]{43}$/)
    expect(Buffer.from(r.body.secret.slice(12), 'base64url')).toHaveLength(32)
    expect(r.body.key_prefix).toBe(r.body.secret.slice(0, 24))
    expect(r.body).toMatchObject({
      key_id: expect.stringMatching(/^key_\d+$/),
      name: 'ci',
      scopes: ['accounts:read'],
      account_ids: [t.accountId],
      environment: 'live',
      ip_allowlist: [],
      status: 'active',
      rotated_from: null,
    })
    const days = (Date.parse(r.body.expires_at) - Date.parse(r.body.created_at)) / 86_400_000
    expect(days).toBeCloseTo(90, 3)
    const listed = await master.get(`/users/${t.userId}/credentials`)
    const row = listed.body.data.find((k: any) => k.key_id === r.body.key_id)
    expect(row).toBeDefined()
    expect(row).not.toHaveProperty('secret')
    expect(listed.text).not.toContain(r.body.secret)
    // The secret authenticates; only its SHA-256 is kept, so the listing can never show it again.
    expect(createHash('sha256').update(r.body.secret).digest('hex')).toHaveLength(64)
    expect((await createApi(base, r.body.secret).get(`/accounts/${t.accountId}`)).status).toBe(200)
  })

  it('defaults to 365 days and refuses 0, 366 and fractions', async () => {
    verifies('credentials.create')
    const r = await master.post(`/users/${t.userId}/credentials`, { scopes: ['accounts:read'] })
    expect((Date.parse(r.body.expires_at) - Date.parse(r.body.created_at)) / 86_400_000).toBeCloseTo(365, 3)
    for (const bad of [0, 366, 1.5, '30']) {
      const e = await master.post(`/users/${t.userId}/credentials`, { scopes: ['accounts:read'], expires_in_days: bad })
      expect(err(e), String(bad)).toMatchObject({ code: 'validation_error', field: 'expires_in_days' })
    }
  })

  it('refuses unknown and master-only scopes with 400 invalid_scope field scopes', async () => {
    verifies('auth.invalid_scope')
    for (const scopes of [
      ['agents:fly'],
      ['users:manage'],
      ['audit:read'],
      ['admin:all_accounts'],
      [],
      ['accounts:read', 'nope'],
      'accounts:read',
    ]) {
      const r = await master.post(`/users/${t.userId}/credentials`, { scopes })
      expect(r.status, JSON.stringify(scopes)).toBe(400)
      expect(err(r), JSON.stringify(scopes)).toMatchObject({ code: 'invalid_scope', field: 'scopes' })
    }
  })

  it('a personal key can issue keys for its own user only, and only with scopes it holds', async () => {
    verifies('auth.invalid_scope', 'auth.scope')
    const narrow = await master.post(`/users/${t.userId}/credentials`, {
      scopes: ['credentials:manage', 'accounts:read'],
    })
    const k = createApi(base, narrow.body.secret)
    expect((await k.post(`/users/${t.userId}/credentials`, { scopes: ['accounts:read'] })).status).toBe(201)
    expect(err(await k.post(`/users/${t.userId}/credentials`, { scopes: ['accounts:write'] }))).toMatchObject({
      code: 'invalid_scope',
      field: 'scopes',
    })
    const other = await createTenant(master)
    expect(err(await k.post(`/users/${other.userId}/credentials`, { scopes: ['accounts:read'] }))).toMatchObject({
      code: 'forbidden_account',
    })
    expect(err(await k.get(`/users/${other.userId}/credentials`)).code).toBe('forbidden_account')
  })

  it('a key confined by ip_allowlist issues keys confined alike: inherited when none is asked, refused outside it', async () => {
    verifies('security.key-allowlist-ceiling')
    const confined = await master.post(`/users/${t.userId}/credentials`, {
      scopes: ['credentials:manage', 'accounts:read'],
      ip_allowlist: ['198.51.100.0/24', '2001:db8::/32'],
    })
    expect(confined.status).toBe(201)
    const inside = { 'x-forwarded-for': '198.51.100.20' }
    const issuer = createApi(base, confined.body.secret)
    const inherited = await issuer.post(
      `/users/${t.userId}/credentials`,
      { scopes: ['accounts:read'] },
      { headers: inside },
    )
    expect(inherited.status).toBe(201)
    expect(inherited.body.ip_allowlist).toEqual(['198.51.100.0/24', '2001:db8::/32'])
    // The new key is refused from elsewhere, as its issuer is.
    expect(
      err(
        await createApi(base, inherited.body.secret).get(`/accounts/${t.accountId}`, {
          headers: { 'x-forwarded-for': '203.0.113.5' },
        }),
      ).code,
    ).toBe('ip_not_allowed')
    const narrower = await issuer.post(
      `/users/${t.userId}/credentials`,
      { scopes: ['accounts:read'], ip_allowlist: ['198.51.100.7', '198.51.100.128/25', '2001:db8:1::/48'] },
      { headers: inside },
    )
    expect(narrower.status).toBe(201)
    for (const wider of [
      ['0.0.0.0/0'],
      ['198.51.100.0/23'],
      ['198.51.101.1'],
      ['198.51.100.7', '203.0.113.1'],
      ['2001:db9::1'],
    ]) {
      const r = await issuer.post(
        `/users/${t.userId}/credentials`,
        { scopes: ['accounts:read'], ip_allowlist: wider },
        { headers: inside },
      )
      expect(r.status, wider.join(',')).toBe(400)
      expect(err(r), wider.join(',')).toMatchObject({ code: 'validation_error', field: 'ip_allowlist' })
    }
    // The master key is not confined.
    expect(
      (await master.post(`/users/${t.userId}/credentials`, { scopes: ['accounts:read'], ip_allowlist: ['0.0.0.0/0'] }))
        .status,
    ).toBe(201)
  })

  it('extra account_ids need the master key; the master key may add existing accounts only', async () => {
    verifies('auth.account-resolution')
    const other = await createTenant(master)
    const viaPersonal = await t.api.post(`/users/${t.userId}/credentials`, {
      scopes: ['accounts:read'],
      account_ids: [other.accountId],
    })
    expect(err(viaPersonal)).toMatchObject({ code: 'forbidden_account', field: 'account_id' })
    const viaMaster = await master.post(`/users/${t.userId}/credentials`, {
      scopes: ['accounts:read'],
      account_ids: [other.accountId],
    })
    expect(viaMaster.status).toBe(201)
    expect(viaMaster.body.account_ids).toEqual([t.accountId, other.accountId])
    const missing = await master.post(`/users/${t.userId}/credentials`, {
      scopes: ['accounts:read'],
      account_ids: ['acc_987654321'],
    })
    expect(err(missing)).toMatchObject({ code: 'validation_error', field: 'account_ids' })
    expect((await master.post('/users/usr_987654321/credentials', { scopes: ['accounts:read'] })).status).toBe(404)
    expect(
      err(
        await master.post(`/users/${t.userId}/credentials`, { scopes: ['accounts:read'], ip_allowlist: ['300.1.1.1'] }),
      ),
    ).toMatchObject({ code: 'validation_error', field: 'ip_allowlist.0' })
  })
})

describe('using keys', () => {
  it('a route without its scope is 403 insufficient_scope', async () => {
    verifies('auth.scope')
    const r = await master.post(`/users/${t.userId}/credentials`, { scopes: ['usage:read'] })
    const k = createApi(base, r.body.secret)
    const e = await k.get(`/accounts/${t.accountId}`)
    expect(e.status).toBe(403)
    expect(err(e).code).toBe('insufficient_scope')
    expect(err(e).message).toContain('accounts:read')
    expect((await k.get(`/accounts/${t.accountId}/balance`)).status).toBe(200)
    // users:manage is master-only: a personal key never reaches /users.
    expect(err(await t.api.get('/users')).code).toBe('insufficient_scope')
  })

  it('ip_allowlist admits listed IPv4, IPv6 and CIDR clients (first X-Forwarded-For hop) and refuses others', async () => {
    verifies('auth.ip_allowlist')
    const r = await master.post(`/users/${t.userId}/credentials`, {
      scopes: ['accounts:read'],
      ip_allowlist: ['198.51.100.7', '203.0.113.0/24', '2001:db8::/32'],
    })
    expect(r.body.ip_allowlist).toEqual(['198.51.100.7', '203.0.113.0/24', '2001:db8::/32'])
    const k = createApi(base, r.body.secret)
    const from = (ip: string) => k.get(`/accounts/${t.accountId}`, { headers: { 'x-forwarded-for': ip } })
    for (const ok of ['198.51.100.7', '203.0.113.200, 10.0.0.1', '2001:db8:1::5'])
      expect((await from(ok)).status, ok).toBe(200)
    for (const bad of ['198.51.100.8', '10.0.0.1, 203.0.113.5', '2001:db9::1']) {
      const e = await from(bad)
      expect(e.status, bad).toBe(403)
      expect(err(e).code).toBe('ip_not_allowed')
    }
    // Without the header the socket address (loopback here) is the client and is not listed.
    expect(err(await k.get(`/accounts/${t.accountId}`, { headers: { 'x-forwarded-for': '' } })).code).toBe(
      'ip_not_allowed',
    )
  })

  it('within 30 days of expiry every response carries X-Svc-Key-Expires-In: <n>d', async () => {
    verifies('auth.expiry-warning')
    const soon = await master.post(`/users/${t.userId}/credentials`, { scopes: ['accounts:read'], expires_in_days: 10 })
    const k = createApi(base, soon.body.secret)
    expect((await k.get(`/accounts/${t.accountId}`)).headers.get('x-svc-key-expires-in')).toBe('10d')
    expect((await k.get(`/accounts/${t.accountId}/balance`)).headers.get('x-svc-key-expires-in')).toBe('10d')
    const later = await master.post(`/users/${t.userId}/credentials`, {
      scopes: ['accounts:read'],
      expires_in_days: 31,
    })
    expect(
      (await createApi(base, later.body.secret).get(`/accounts/${t.accountId}`)).headers.get('x-svc-key-expires-in'),
    ).toBeNull()
  })
})

describe('rotation and revocation', () => {
  it('rotate mints a successor that inherits scopes, account_ids and allowlist; both work during grace', async () => {
    verifies('credentials.rotate')
    const orig = await master.post(`/users/${t.userId}/credentials`, {
      name: 'rot',
      scopes: ['accounts:read', 'credentials:manage'],
      ip_allowlist: ['0.0.0.0/0', '::/0'],
    })
    const before = Date.now()
    const rot = await createApi(base, orig.body.secret).post(`/credentials/${orig.body.key_id}/rotate`)
    expect(rot.status).toBe(201)
    expect(rot.body).toMatchObject({
      rotated_from: orig.body.key_id,
      scopes: orig.body.scopes,
      account_ids: orig.body.account_ids,
      ip_allowlist: orig.body.ip_allowlist,
      name: 'rot',
      status: 'active',
    })
    expect(rot.body.secret).toMatch(/^svc_sk_live_/)
    expect(rot.body.secret).not.toBe(orig.body.secret)
    const grace = Date.parse(rot.body.grace_expires_at) - before
    expect(grace).toBeGreaterThan(7 * 86_400_000 - 60_000)
    expect(grace).toBeLessThan(7 * 86_400_000 + 60_000)
    expect((await createApi(base, orig.body.secret).get(`/accounts/${t.accountId}`)).status).toBe(200)
    expect((await createApi(base, rot.body.secret).get(`/accounts/${t.accountId}`)).status).toBe(200)
    const listed = (await master.get(`/users/${t.userId}/credentials?limit=100`)).body.data
    expect(listed.find((k: any) => k.key_id === orig.body.key_id).expires_at).toBe(rot.body.grace_expires_at)
  })

  it('grace is capped by the predecessor own earlier expiry', async () => {
    verifies('credentials.rotate')
    const short = await master.post(`/users/${t.userId}/credentials`, { scopes: ['accounts:read'], expires_in_days: 2 })
    const rot = await master.post(`/credentials/${short.body.key_id}/rotate`)
    expect(rot.body.grace_expires_at).toBe(short.body.expires_at)
  })

  it('DELETE revokes at once; a revoked key cannot be rotated (400) and answers 401 invalid_credentials', async () => {
    verifies('credentials.revoke', 'auth.invalid_credentials')
    const k = await master.post(`/users/${t.userId}/credentials`, { scopes: ['accounts:read'] })
    const d = await master.delete(`/credentials/${k.body.key_id}`)
    expect(d.status).toBe(204)
    expect(d.text).toBe('')
    const e = await createApi(base, k.body.secret).get(`/accounts/${t.accountId}`)
    expect(e.status).toBe(401)
    expect(err(e).code).toBe('invalid_credentials')
    expect(err(await master.post(`/credentials/${k.body.key_id}/rotate`))).toMatchObject({ code: 'validation_error' })
    expect((await master.delete(`/credentials/${k.body.key_id}`)).status).toBe(204)
    const listed = (await master.get(`/users/${t.userId}/credentials?limit=100`)).body.data
    expect(listed.find((x: any) => x.key_id === k.body.key_id).status).toBe('revoked')
  })

  it("another user's key answers 404 to rotate and delete; malformed ids are 400 invalid_id", async () => {
    verifies('tenancy.isolation', 'conventions.ids')
    const other = await createTenant(master)
    expect(err(await t.api.post(`/credentials/${other.keyId}/rotate`)).code).toBe('not_found')
    expect(err(await t.api.delete(`/credentials/${other.keyId}`)).code).toBe('not_found')
    expect((await other.api.get(`/accounts/${other.accountId}`)).status).toBe(200)
    expect(err(await t.api.delete('/credentials/abc')).code).toBe('invalid_id')
  })
})

describe('GET /credentials', () => {
  it('the master key sees every key; a personal key sees its own user and may name only it', async () => {
    verifies('credentials.create', 'auth.master-key')
    const other = await createTenant(master)
    const all = await master.get('/credentials?limit=100')
    expect(all.status).toBe(200)
    expect(all.body.pagination.limit).toBe(100)
    const mine = await t.api.get('/credentials?limit=100')
    expect(mine.body.data.length).toBeGreaterThan(0)
    expect(mine.body.data.every((k: any) => k.user_id === t.userId)).toBe(true)
    expect((await t.api.get(`/credentials?user_id=${t.userId}`)).status).toBe(200)
    expect((await t.api.get(`/credentials?user_id=${t.accountId}`)).status).toBe(200)
    expect(err(await t.api.get(`/credentials?user_id=${other.userId}`))).toMatchObject({ code: 'forbidden_account' })
    const byUser = await master.get(`/credentials?user_id=${other.userId}`)
    expect(byUser.body.data.map((k: any) => k.key_id)).toEqual([other.keyId])
    expect(err(await master.get('/credentials?user_id=key_1')).code).toBe('invalid_id')
  })

  it('pages with a cursor bound to the credential', async () => {
    verifies('cursor.signed-and-bound')
    for (let i = 0; i < 3; i++) await t.api.post(`/users/${t.userId}/credentials`, { scopes: ['accounts:read'] })
    const first = await t.api.get('/credentials?limit=2')
    expect(first.body.pagination.has_more).toBe(true)
    const cursor = encodeURIComponent(first.body.pagination.next_cursor)
    expect((await t.api.get(`/credentials?limit=2&cursor=${cursor}`)).status).toBe(200)
    // The same cursor under another credential is refused.
    expect(err(await master.get(`/credentials?limit=2&cursor=${cursor}`)).code).toBe('invalid_cursor')
    expect(uniqueEmail()).toContain('@')
  })
})
