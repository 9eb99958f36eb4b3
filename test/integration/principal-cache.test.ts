// The principal cache (issue 14): authenticated requests answer from memory, yet a revocation, a key edit,
// a rotation or a suspension is seen on the very next request by the instance that made it, and within
// milliseconds by a second instance on the same PostgreSQL (LISTEN/NOTIFY; row triggers cover SQL written
// by hand). Instance A is the shared test server; instance B is this file's own, on the same database.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi } from '../helpers/api'
import { startServer, type TestServer } from '../helpers/server'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

const base = inject('base')
const master = createApi(base, inject('masterKey'))
const dash = createApi(inject('origin'))
// This file's logins count against their own client IP.
const ip = `192.0.2.${(process.pid % 200) + 30}`

let t: Tenant

beforeAll(async () => {
  t = await createTenant(master)
}, 60_000)

/** A fresh key of the tenant with `scopes`, already used once (so it is cached) on each of `apis`. */
async function warmKey(scopes: string[], bases: string[] = [base]) {
  const r = await master.post(`/users/${t.userId}/credentials`, { name: 'cache', scopes })
  expect(r.status, r.text).toBe(201)
  for (const b of bases) {
    const first = await createApi(b, r.body.secret).get(`/accounts/${t.accountId}`)
    expect(first.status, first.text).toBe(200)
  }
  return { id: r.body.key_id as string, secret: r.body.secret as string }
}

/** The dashboard edit of a key's scopes (PATCH /api/api-keys/{id}) under a fresh login of the tenant. */
async function editScopes(keyId: string, scopes: string[]) {
  const login = await dash.post(
    '/api/auth/login',
    { email: t.email, password: t.password },
    { headers: { 'x-forwarded-for': ip } },
  )
  expect(login.status, login.text).toBe(200)
  const patched = await dash.patch(
    `/api/api-keys/${keyId}`,
    { scopes },
    { headers: { authorization: `Session ${login.body.session_token}`, 'x-forwarded-for': ip } },
  )
  expect(patched.status, patched.text).toBe(200)
}

const readAccount = (b: string, secret: string) => createApi(b, secret).get(`/accounts/${t.accountId}`)

describe('principal cache on the instance that makes the change', () => {
  it('a revoked key is refused on the very next request', async () => {
    verifies('cache.principal.same-instance')
    const k = await warmKey(['accounts:read'])
    expect((await readAccount(base, k.secret)).status).toBe(200)
    const revoked = await t.api.delete(`/credentials/${k.id}`)
    expect(revoked.status, revoked.text).toBe(204)
    const next = await readAccount(base, k.secret)
    expect(next.status).toBe(401)
    expect(next.body.error.code).toBe('invalid_credentials')
  })

  it('a key whose scopes are edited is judged by the new scopes on the very next request', async () => {
    verifies('cache.principal.same-instance')
    const k = await warmKey(['accounts:read', 'agents:read'])
    await editScopes(k.id, ['agents:read'])
    const next = await readAccount(base, k.secret)
    expect(next.status).toBe(403)
    expect(next.body.error.code).toBe('insufficient_scope')
    const agents = await createApi(base, k.secret).get(`/accounts/${t.accountId}/agents`)
    expect(agents.status, agents.text).toBe(200)
  })

  it('a rotated key carries its grace expiry on the very next request', async () => {
    verifies('cache.principal.same-instance')
    const k = await warmKey(['accounts:read'])
    expect((await readAccount(base, k.secret)).headers.get('x-svc-key-expires-in')).toBeNull()
    const rotated = await t.api.post(`/credentials/${k.id}/rotate`, undefined)
    expect(rotated.status, rotated.text).toBe(201)
    const next = await readAccount(base, k.secret)
    expect(next.status).toBe(200)
    expect(next.headers.get('x-svc-key-expires-in')).toBe('7d')
  })

  it('a suspended tenant is refused on the very next request, and served again at once when resumed', async () => {
    verifies('cache.principal.same-instance')
    const k = await warmKey(['accounts:read'])
    expect((await master.patch(`/users/${t.userId}`, { status: 'suspended' })).status).toBe(200)
    const refused = await readAccount(base, k.secret)
    expect(refused.status).toBe(403)
    expect(refused.body.error.code).toBe('account_suspended')
    expect((await master.patch(`/users/${t.userId}`, { status: 'active' })).status).toBe(200)
    expect((await readAccount(base, k.secret)).status).toBe(200)
  })
})

describe.runIf(!!process.env.DATABASE_URL)('principal cache across two instances on one PostgreSQL', () => {
  let b: TestServer
  beforeAll(async () => {
    b = await startServer()
  }, 90_000)
  afterAll(async () => {
    await b?.stop('SIGKILL')
  })

  /** Polls instance B every 5 ms until `ok` holds; answers the milliseconds it took. */
  async function seenByB(what: string, secret: string, ok: (status: number, code?: string) => boolean) {
    const started = Date.now()
    await until(
      what,
      async () => {
        const r = await readAccount(b.base, secret)
        return ok(r.status, r.body?.error?.code)
      },
      2_000,
      5,
    )
    return Date.now() - started
  }

  it('a revocation, a key edit and a suspension made on A are seen by B within milliseconds', async () => {
    verifies('cache.principal.cross-instance')
    const revokedKey = await warmKey(['accounts:read'], [base, b.base])
    expect((await t.api.delete(`/credentials/${revokedKey.id}`)).status).toBe(204)
    const revocationMs = await seenByB('B to refuse the revoked key', revokedKey.secret, (s) => s === 401)

    const edited = await warmKey(['accounts:read', 'agents:read'], [base, b.base])
    await editScopes(edited.id, ['agents:read'])
    const editMs = await seenByB(
      'B to apply the new scopes',
      edited.secret,
      (s, c) => s === 403 && c === 'insufficient_scope',
    )

    const k = await warmKey(['accounts:read'], [base, b.base])
    expect((await master.patch(`/users/${t.userId}`, { status: 'suspended' })).status).toBe(200)
    const suspendMs = await seenByB(
      'B to refuse the suspended tenant',
      k.secret,
      (s, c) => s === 403 && c === 'account_suspended',
    )
    expect((await master.patch(`/users/${t.userId}`, { status: 'active' })).status).toBe(200)
    await seenByB('B to serve the resumed tenant', k.secret, (s) => s === 200)
    console.log(
      `[principal-cache] seen by B after: revoke ${revocationMs} ms, edit ${editMs} ms, suspend ${suspendMs} ms`,
    )
    for (const ms of [revocationMs, editMs, suspendMs]) expect(ms).toBeLessThan(1_000)
  })

  it('a key revoked by SQL written by hand is refused by both instances (the row trigger notifies)', async () => {
    verifies('cache.principal.cross-instance')
    const k = await warmKey(['accounts:read'], [base, b.base])
    const { default: postgres } = await import('postgres')
    const sql = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} })
    try {
      await sql`UPDATE api_keys SET status = 'revoked', revoked_at = now() WHERE id = ${k.id}`
    } finally {
      await sql.end()
    }
    await seenByB('B to refuse the key revoked by SQL', k.secret, (s) => s === 401)
    await until(
      'A to refuse the key revoked by SQL',
      async () => (await readAccount(base, k.secret)).status === 401,
      2_000,
      5,
    )
  })

  it("a partner's member created on A is reached by the partner's key cached on B within milliseconds", async () => {
    verifies('partners.member-accounts-cross-instance')
    const partner = await warmKey(['partners:manage', 'accounts:read'], [base, b.base])
    const created = await createApi(base, partner.secret).post('/partners/members', {
      email: `member-${process.pid}-${Date.now()}@example.com`,
    })
    expect(created.status, created.text).toBe(201)
    const started = Date.now()
    await until(
      "B to let the partner's key read its new member's account",
      async () => (await createApi(b.base, partner.secret).get(`/accounts/${created.body.account_id}`)).status === 200,
      2_000,
      5,
    )
    const ms = Date.now() - started
    console.log(`[principal-cache] new partner member reachable on B after ${ms} ms`)
    expect(ms).toBeLessThan(1_000)
  })
})
