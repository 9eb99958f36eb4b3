// Partners (issue 18, part 3) on the shared server: two partners (users whose keys hold partners:manage,
// granted by the master key) provision members, read and list only their own, reach their members'
// accounts through the ordinary routes and no one else's, issue keys and login links for their members,
// and every such action is audited cross_account. Refusals: no key, no partners:manage, the master key.
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, err, expectError, uniqueEmail, type Api } from '../helpers/api'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

const base = inject('base')
const master = createApi(base, inject('masterKey'))
const anon = createApi(base)
const dash = createApi(inject('origin'))
// This file's dashboard calls count against their own client IP.
const dashIp = `192.0.2.${(process.pid % 200) + 40}`
const dh = (extra: Record<string, string> = {}) => ({ headers: { 'x-forwarded-for': dashIp, ...extra } })

/** The scopes a partner key holds in these tests: partners:manage and what it hands on to members. */
const PARTNER_SCOPES = ['partners:manage', 'accounts:read', 'agents:read', 'credentials:manage']

interface Partner extends Tenant {
  partner: Api
  partnerKeyId: string
}

async function newPartner(): Promise<Partner> {
  const t = await createTenant(master, { scopes: ['accounts:read'] })
  const key = await master.post(`/users/${t.userId}/credentials`, { name: 'partner', scopes: PARTNER_SCOPES })
  expect(key.status, key.text).toBe(201)
  return { ...t, partner: createApi(base, key.body.secret), partnerKeyId: key.body.key_id }
}

async function addMember(p: Partner, body: Record<string, unknown> = {}) {
  const r = await p.partner.post('/partners/members', { email: uniqueEmail('member'), ...body })
  expect(r.status, r.text).toBe(201)
  return r.body as { user_id: string; account_id: string; partner_id: string; email: string }
}

/** The audit rows of one credential since `from`, once `ok` holds for them. */
async function auditRows(credentialId: string, from: string, ok: (rows: any[]) => boolean) {
  return until(
    'audit rows',
    async () => {
      const r = await master.get(`/audit?credential_id=${credentialId}&from=${encodeURIComponent(from)}&limit=100`)
      expect(r.status, r.text).toBe(200)
      return ok(r.body.data) ? (r.body.data as any[]) : null
    },
    10_000,
    150,
  )
}

let a: Partner
let b: Partner

beforeAll(async () => {
  a = await newPartner()
  b = await newPartner()
}, 60_000)

describe('POST /partners/members', () => {
  it('creates the member user and account with partner_id; the User shape carries partner_id everywhere', async () => {
    verifies('partners.create-member', 'users.partner-id')
    const email = uniqueEmail('member')
    const r = await a.partner.post('/partners/members', {
      email,
      name: 'Mia',
      company_name: 'Mia Bakes',
      plan: 'starter',
      external_ids: { crm: 'm-1' },
    })
    expect(r.status, r.text).toBe(201)
    expect(r.body).toMatchObject({
      partner_id: a.userId,
      email,
      name: 'Mia',
      company_name: 'Mia Bakes',
      plan: 'starter',
      plan_expires_at: null,
      external_ids: { crm: 'm-1' },
      status: 'active',
      currency_code: 'USD',
    })
    expect(r.body.user_id).toMatch(/^usr_\d+$/)
    expect(r.body.account_id).toBe(r.body.user_id.replace('usr_', 'acc_'))
    // The master key sees the same user, partner_id included; an ordinary user has partner_id null.
    const read = await master.get(`/users/${r.body.user_id}`)
    expect(read.status).toBe(200)
    expect(read.body).toEqual({ ...r.body, meta: read.body.meta })
    expect((await master.get(`/users/${a.userId}`)).body.partner_id).toBeNull()
    const plain = await master.post('/users', { email: uniqueEmail('plain') })
    expect(plain.body.partner_id).toBeNull()
    const since = new Date(Date.parse(r.body.created_at) - 1).toISOString()
    const listed = await master.get(`/users?limit=100&updated_since=${encodeURIComponent(since)}`)
    const row = (listed.body.data as any[]).find((u) => u.user_id === r.body.user_id)
    expect(row?.partner_id).toBe(a.userId)
    // A trial by default, like POST /users.
    const trial = await addMember(a)
    expect((await a.partner.get(`/partners/members/${trial.user_id}`)).body.plan).toBe('trial')
  })

  it('validates like POST /users: unsupported_field, validation_error with field, invalid_email, 409 email_exists', async () => {
    verifies('partners.create-member')
    expectError(
      await a.partner.post('/partners/members', { email: uniqueEmail(), password: 'x'.repeat(12) }),
      400,
      'unsupported_field',
    )
    expectError(
      await a.partner.post('/partners/members', { email: uniqueEmail(), plan: 'gold' }),
      400,
      'validation_error',
      'plan',
    )
    expectError(
      await a.partner.post('/partners/members', { email: uniqueEmail(), name: '' }),
      400,
      'validation_error',
      'name',
    )
    expectError(
      await a.partner.post('/partners/members', { email: uniqueEmail(), external_ids: { 'bad key': 'x' } }),
      400,
      'validation_error',
    )
    expectError(await a.partner.post('/partners/members', { email: 'a@' }), 400, 'invalid_email', 'email')
    const none = await a.partner.post('/partners/members', {})
    expect(none.status).toBe(400)
    expect(['validation_error', 'invalid_email']).toContain(err(none).code)
    expect(err(none).field).toBe('email')
    const taken = await addMember(a)
    expectError(
      await b.partner.post('/partners/members', { email: taken.email.toUpperCase() }),
      409,
      'email_exists',
      'email',
    )
    expectError(await a.partner.post('/partners/members', { email: a.email }), 409, 'email_exists', 'email')
    const notJson = await a.partner.request('POST', '/partners/members', {
      raw: '{"email":',
      headers: { 'content-type': 'application/json' },
    })
    expect(notJson.status).toBe(400)
  })
})

describe('two partners and their members', () => {
  it('each lists and reads only its own members; the list pages newest first with a cursor', async () => {
    verifies('partners.read-list', 'partners.isolation')
    const p = await newPartner()
    const q = await newPartner()
    const mine = [await addMember(p), await addMember(p), await addMember(p)]
    const theirs = await addMember(q)
    const first = await p.partner.get('/partners/members?limit=2')
    expect(first.status, first.text).toBe(200)
    expect(first.body.data.map((m: any) => m.user_id)).toEqual([mine[2].user_id, mine[1].user_id])
    expect(first.body.pagination.has_more).toBe(true)
    const second = await p.partner.get(`/partners/members?limit=2&cursor=${first.body.pagination.next_cursor}`)
    expect(second.status, second.text).toBe(200)
    expect(second.body.data.map((m: any) => m.user_id)).toEqual([mine[0].user_id])
    expect(second.body.pagination.has_more).toBe(false)
    for (const m of [...first.body.data, ...second.body.data]) expect(m.partner_id).toBe(p.userId)
    // The other partner's cursor is not this one's.
    const foreign = await q.partner.get(`/partners/members?limit=2&cursor=${first.body.pagination.next_cursor}`)
    expectError(foreign, 400, 'invalid_cursor')
    const qList = await q.partner.get('/partners/members')
    expect(qList.body.data.map((m: any) => m.user_id)).toEqual([theirs.user_id])

    expect((await p.partner.get(`/partners/members/${mine[0].user_id}`)).body.user_id).toBe(mine[0].user_id)
    // Another partner's member, the partner itself, an ordinary user and an unknown id: 404.
    expectError(await p.partner.get(`/partners/members/${theirs.user_id}`), 404, 'not_found')
    expectError(await q.partner.get(`/partners/members/${mine[0].user_id}`), 404, 'not_found')
    expectError(await p.partner.get(`/partners/members/${p.userId}`), 404, 'not_found')
    expectError(await p.partner.get(`/partners/members/${a.userId}`), 404, 'not_found')
    expectError(await p.partner.get('/partners/members/usr_987654321'), 404, 'not_found')
    expectError(await p.partner.get('/partners/members/acc_1'), 400, 'invalid_id')
    expectError(await p.partner.get('/partners/members?limit=0'), 400, 'invalid_limit')
  })

  it("each partner key reaches its members' accounts on the next request, and no one else's", async () => {
    verifies('partners.member-accounts', 'partners.isolation')
    // Warm the partner key's cached principal first: the member created next must still be reachable.
    expect((await a.partner.get(`/accounts/${a.accountId}`)).status).toBe(200)
    const ma = await addMember(a)
    const mb = await addMember(b)
    const read = await a.partner.get(`/accounts/${ma.account_id}`)
    expect(read.status, read.text).toBe(200)
    expect(read.body.account_id ?? read.body.id).toBe(ma.account_id)
    // usr_ names the same tenant.
    expect((await a.partner.get(`/accounts/${ma.user_id}`)).status).toBe(200)
    expect((await a.partner.get(`/accounts/${ma.account_id}/agents`)).status).toBe(200)
    const all = await a.partner.get('/accounts?limit=100')
    expect(all.status, all.text).toBe(200)
    const ids = (all.body.data as any[]).map((x) => x.account_id ?? x.id)
    expect(ids).toContain(ma.account_id)
    expect(ids).toContain(a.accountId)
    expect(ids).not.toContain(mb.account_id)
    const viaHeader = await a.partner.get('/accounts', { headers: { 'x-svc-account': ma.account_id } })
    expect(viaHeader.status, viaHeader.text).toBe(200)
    // Another partner's member, the other partner and an ordinary tenant: refused.
    for (const acc of [mb.account_id, b.accountId]) {
      const r = await a.partner.get(`/accounts/${acc}`)
      expect([403, 404], `${acc} → ${r.status}`).toContain(r.status)
      expect(r.text).not.toContain(mb.email)
      expectError(await a.partner.get('/accounts', { headers: { 'x-svc-account': acc } }), 403, 'forbidden_account')
      expectError(await a.partner.get(`/accounts?account_id=${acc}`), 403, 'forbidden_account')
    }
    expect([403, 404]).toContain((await b.partner.get(`/accounts/${ma.account_id}`)).status)
    // The partner's other key (accounts:read only) is not a partner key: it reaches no member.
    expect([403, 404]).toContain((await a.api.get(`/accounts/${ma.account_id}`)).status)
  })

  it("a partner key's account_ids list its members' accounts, as it reaches them", async () => {
    verifies('partners.member-accounts', 'contract.smaller-points')
    const c = await newPartner()
    const keyOf = async (api: Api, keyId: string) => {
      const r = await api.get('/credentials?limit=100')
      expect(r.status, r.text).toBe(200)
      return (r.body.data as any[]).find((k) => k.key_id === keyId)
    }
    expect((await keyOf(c.partner, c.partnerKeyId)).account_ids).toEqual([c.accountId])
    const m1 = await addMember(c)
    const m2 = await addMember(c)
    const other = await addMember(b)
    const listed = await keyOf(c.partner, c.partnerKeyId)
    // Its own account first, then the members in the order they joined; never another partner's member.
    expect(listed.account_ids).toEqual([c.accountId, m1.account_id, m2.account_id])
    expect(listed.account_ids).not.toContain(other.account_id)
    // The same user's key without partners:manage reaches no member, and lists none.
    expect((await keyOf(c.partner, c.keyId)).account_ids).toEqual([c.accountId])
    // Every place a key is shown agrees: the user's key list, the operator's view, a rotation's successor.
    const viaUser = await master.get(`/users/${c.userId}/credentials?limit=100`)
    expect((viaUser.body.data as any[]).find((k) => k.key_id === c.partnerKeyId).account_ids).toEqual(
      listed.account_ids,
    )
    expect((await master.get(`/admin/credentials/${c.partnerKeyId}`)).body.account_ids).toEqual(listed.account_ids)
    const rotated = await c.partner.post(`/credentials/${c.partnerKeyId}/rotate`)
    expect(rotated.status, rotated.text).toBe(201)
    expect(rotated.body.account_ids).toEqual(listed.account_ids)
    // The member's own key lists its own account only.
    const mk = await c.partner.post(`/users/${m1.user_id}/credentials`, { name: 'm', scopes: ['accounts:read'] })
    expect(mk.status, mk.text).toBe(201)
    expect(mk.body.account_ids).toEqual([m1.account_id])
  })

  it("issues keys for its members only; the member's key works on its own account alone", async () => {
    verifies('partners.member-keys', 'partners.isolation')
    const ma = await addMember(a)
    const mb = await addMember(b)
    const key = await a.partner.post(`/users/${ma.user_id}/credentials`, {
      name: 'for member',
      scopes: ['accounts:read'],
    })
    expect(key.status, key.text).toBe(201)
    expect(key.body).toMatchObject({ user_id: ma.user_id, account_ids: [ma.account_id], scopes: ['accounts:read'] })
    const member = createApi(base, key.body.secret)
    expect((await member.get(`/accounts/${ma.account_id}`)).status).toBe(200)
    expect([403, 404]).toContain((await member.get(`/accounts/${a.accountId}`)).status)
    expectError(await member.get('/partners/members'), 403, 'insufficient_scope')
    // Never partners:manage for a member, never a scope the partner key lacks, never extra accounts.
    expectError(
      await a.partner.post(`/users/${ma.user_id}/credentials`, { scopes: ['partners:manage'] }),
      400,
      'invalid_scope',
    )
    expectError(
      await a.partner.post(`/users/${ma.user_id}/credentials`, { scopes: ['kb:write'] }),
      400,
      'invalid_scope',
    )
    expectError(
      await a.partner.post(`/users/${ma.user_id}/credentials`, {
        scopes: ['accounts:read'],
        account_ids: [a.accountId],
      }),
      403,
      'forbidden_account',
    )
    // Another partner's member, an ordinary tenant, an unknown user: the same 403.
    for (const usr of [mb.user_id, b.userId, 'usr_987654321'])
      expectError(
        await a.partner.post(`/users/${usr}/credentials`, { scopes: ['accounts:read'] }),
        403,
        'forbidden_account',
      )
    // partners:manage without credentials:manage issues keys for members, not for its own user.
    const bare = await master.post(`/users/${a.userId}/credentials`, { scopes: ['partners:manage', 'accounts:read'] })
    const bareApi = createApi(base, bare.body.secret)
    expect((await bareApi.post(`/users/${ma.user_id}/credentials`, { scopes: ['accounts:read'] })).status).toBe(201)
    expectError(
      await bareApi.post(`/users/${a.userId}/credentials`, { scopes: ['accounts:read'] }),
      403,
      'insufficient_scope',
    )
  })

  it('issues login links for its members only; the session never holds partners:manage', async () => {
    verifies('partners.login-links', 'partners.isolation')
    const ma = await addMember(a)
    const mb = await addMember(b)
    const link = await a.partner.post(`/users/${ma.user_id}/login-links`)
    expect(link.status, link.text).toBe(201)
    expectError(await a.partner.post(`/users/${mb.user_id}/login-links`), 403, 'forbidden_account')
    expectError(await b.partner.post(`/users/${ma.user_id}/login-links`), 403, 'forbidden_account')
    expectError(await a.partner.post(`/users/${a.userId}/login-links`), 403, 'forbidden_account')
    const opened = await dash.post('/api/auth/login-link', { token: link.body.token }, dh())
    expect(opened.status, opened.text).toBe(200)
    expect(opened.body.user_id).toBe(ma.user_id)
    const session = dh({ authorization: `Session ${opened.body.session_token}` })
    const ok = await dash.post('/api/api-keys', { scopes: ['accounts:read'] }, session)
    expect(ok.status, ok.text).toBe(201)
    expect(ok.body.account_ids).toEqual([ma.account_id])
    expect(err(await dash.post('/api/api-keys', { scopes: ['partners:manage'] }, session)).code).toBe('invalid_scope')
    // Beyond the partner key's scopes: refused too.
    expect(err(await dash.post('/api/api-keys', { scopes: ['kb:write'] }, session)).code).toBe('invalid_scope')
    // A password login never confers partners:manage: no user makes itself a partner from the dashboard.
    const login = await dash.post('/api/auth/login', { email: a.email, password: a.password }, dh())
    expect(login.status, login.text).toBe(200)
    const own = dh({ authorization: `Session ${login.body.session_token}` })
    expect(err(await dash.post('/api/api-keys', { scopes: ['partners:manage'] }, own)).code).toBe('invalid_scope')
    expect((await dash.post('/api/api-keys', { scopes: ['agents:read'] }, own)).status).toBe(201)
  })
})

describe('audit of partner actions', () => {
  it("every action on a member is cross_account with the member's account; its own account's is not", async () => {
    verifies('partners.audit')
    const p = await newPartner()
    const from = new Date(Date.now() - 1000).toISOString()
    const m = await addMember(p)
    expect((await p.partner.get(`/partners/members/${m.user_id}`)).status).toBe(200)
    expect((await p.partner.get('/partners/members')).status).toBe(200)
    expect((await p.partner.get(`/accounts/${m.account_id}`)).status).toBe(200)
    expect((await p.partner.get('/accounts', { headers: { 'x-svc-account': m.account_id } })).status).toBe(200)
    expect((await p.partner.post(`/users/${m.user_id}/credentials`, { scopes: ['accounts:read'] })).status).toBe(201)
    expect((await p.partner.post(`/users/${m.user_id}/login-links`)).status).toBe(201)
    expect((await p.partner.get(`/accounts/${p.accountId}`)).status).toBe(200)
    const rows = await auditRows(p.partnerKeyId, from, (rs) => rs.length >= 8)
    const on = (method: string, path: string) => {
      const row = rows.find((r) => r.method === method && r.path === path && r.status_code < 300)
      expect(row, `${method} ${path}`).toBeDefined()
      return row
    }
    for (const [method, path] of [
      ['POST', '/v1/partners/members'],
      ['GET', `/v1/partners/members/${m.user_id}`],
      ['GET', '/v1/partners/members'],
      ['GET', `/v1/accounts/${m.account_id}`],
      ['GET', '/v1/accounts'],
      ['POST', `/v1/users/${m.user_id}/credentials`],
      ['POST', `/v1/users/${m.user_id}/login-links`],
    ]) {
      const row = on(method, path)
      expect(row.cross_account, `${method} ${path}`).toBe(true)
      expect(row.account_ids, `${method} ${path}`).toContain(m.account_id)
      expect(row.credential_type).toBe('personal')
    }
    const own = on('GET', `/v1/accounts/${p.accountId}`)
    expect(own.cross_account).toBe(false)
    expect(own.account_ids).toEqual([p.accountId])
  })
})

describe('refusals', () => {
  it('no key is 401; a key without partners:manage and the master key are 403 insufficient_scope', async () => {
    verifies('partners.refusals', 'auth.scope', 'auth.missing_credentials')
    const m = await addMember(a)
    const routes: [string, string, unknown?][] = [
      ['POST', '/partners/members', { email: uniqueEmail() }],
      ['GET', '/partners/members'],
      ['GET', `/partners/members/${m.user_id}`],
    ]
    for (const [method, path, body] of routes) {
      expectError(await anon.request(method, path, { body }), 401, 'missing_credentials')
      expectError(await a.api.request(method, path, { body }), 403, 'insufficient_scope')
      expectError(await master.request(method, path, { body }), 403, 'insufficient_scope')
    }
    // Nothing was created by the refused requests.
    const listed = await a.partner.get('/partners/members?limit=100')
    expect((listed.body.data as any[]).every((u) => u.partner_id === a.userId)).toBe(true)
  })
})
