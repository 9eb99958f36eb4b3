import { describe, expect, inject, it } from 'vitest'
import { createApi, err, uniqueEmail } from '../helpers/api'
import { verifies } from '../requirements'

const api = createApi(inject('base'), inject('masterKey'))

describe('POST /users and GET /users/{usr}', () => {
  it('creates user, account and subscription; trial expires 30 days out', async () => {
    verifies('users.create', 'auth.master-key', 'conventions.timestamps', 'conventions.ids')
    const email = uniqueEmail('trial')
    const before = Date.now()
    const r = await api.post('/users', {
      email,
      name: 'Ada',
      company_name: 'Acme',
      timezone: 'Europe/Paris',
      currency_code: 'EUR',
      external_ids: { crm: 'c-1' },
    })
    expect(r.status).toBe(201)
    expect(r.body.user_id).toMatch(/^usr_\d+$/)
    expect(r.body.account_id).toBe(r.body.user_id.replace('usr_', 'acc_'))
    expect(r.body).toMatchObject({
      email,
      name: 'Ada',
      plan: 'trial',
      company_name: 'Acme',
      timezone: 'Europe/Paris',
      currency_code: 'EUR',
      external_ids: { crm: 'c-1' },
      status: 'active',
    })
    expect(r.body).not.toHaveProperty('password')
    expect(r.body.created_at).toMatch(/Z$/)
    const expires = Date.parse(r.body.plan_expires_at) - before
    expect(expires).toBeGreaterThan(30 * 86_400_000 - 60_000)
    expect(expires).toBeLessThan(30 * 86_400_000 + 60_000)
    const read = await api.get(`/users/${r.body.user_id}`)
    expect(read.status).toBe(200)
    expect(read.body).toEqual({ ...r.body, meta: read.body.meta })
  })

  it('starter has no expiry; the e-mail is unique case-insensitively (409 email_exists)', async () => {
    verifies('users.validation')
    const email = uniqueEmail('starter')
    const r = await api.post('/users', { email, plan: 'starter', password: 'correct horse battery' })
    expect(r.status).toBe(201)
    expect(r.body.plan_expires_at).toBeNull()
    const dup = await api.post('/users', { email: email.toUpperCase() })
    expect(dup.status).toBe(409)
    expect(err(dup)).toMatchObject({ code: 'email_exists', field: 'email' })
  })

  it('validates currency, timezone and e-mail', async () => {
    verifies('users.validation')
    const cur = await api.post('/users', { email: uniqueEmail(), currency_code: 'XXQ' })
    expect(err(cur)).toMatchObject({ code: 'validation_error', field: 'currency_code' })
    const tz = await api.post('/users', { email: uniqueEmail(), timezone: 'Mars/Olympus' })
    expect(err(tz)).toMatchObject({ code: 'validation_error', field: 'timezone' })
    const em = await api.post('/users', { email: 'a@' })
    expect(err(em)).toMatchObject({ code: 'invalid_email', field: 'email' })
  })

  it('an unknown user is 404 not_found', async () => {
    verifies('users.read')
    const r = await api.get('/users/usr_987654321')
    expect(r.status).toBe(404)
    expect(err(r).code).toBe('not_found')
  })
})

describe('GET /users', () => {
  it('lists newest first in the list envelope and pages with a signed cursor', async () => {
    verifies('envelope.list', 'users.list', 'cursor.signed-and-bound')
    // Other files create users on the same server at the same time: look at this test's users only
    // through their relative order, which must be newest first.
    const t0 = new Date(Date.now() - 1000).toISOString()
    const made: string[] = []
    for (let i = 0; i < 3; i++) made.push((await api.post('/users', { email: uniqueEmail('page') })).body.user_id)
    const first = await api.get(`/users?limit=2&updated_since=${t0}`)
    expect(first.status).toBe(200)
    expect(Object.keys(first.body).sort()).toEqual(['data', 'meta', 'pagination'])
    expect(first.body.pagination).toMatchObject({ limit: 2, has_more: true })
    expect(first.body.data).toHaveLength(2)
    const seen: string[] = first.body.data.map((u: any) => u.user_id)
    let next = first.body.pagination.next_cursor
    while (next) {
      const r = await api.get(`/users?limit=2&updated_since=${t0}&cursor=${encodeURIComponent(next)}`)
      seen.push(...r.body.data.map((u: any) => u.user_id))
      next = r.body.pagination.next_cursor
    }
    expect(seen.filter((id) => made.includes(id))).toEqual([...made].reverse())
    const cursor = first.body.pagination.next_cursor
    expect(typeof cursor).toBe('string')
    // Bound to the limit and the filters: another use is invalid_cursor.
    expect(err(await api.get(`/users?limit=3&updated_since=${t0}&cursor=${encodeURIComponent(cursor)}`))).toMatchObject(
      { code: 'invalid_cursor', field: 'cursor' },
    )
    expect(err(await api.get(`/users?limit=2&cursor=${encodeURIComponent(cursor)}`)).code).toBe('invalid_cursor')
    expect(err(await api.get('/users?cursor=garbage')).code).toBe('invalid_cursor')
  })

  it('walks to a terminal page with has_more false and next_cursor null', async () => {
    verifies('envelope.list')
    const since = new Date(Date.now() - 1000).toISOString()
    for (let i = 0; i < 3; i++) await api.post('/users', { email: uniqueEmail('walk') })
    const seen: string[] = []
    let path = `/users?limit=2&updated_since=${since}`
    for (let i = 0; i < 50; i++) {
      const r = await api.get(path)
      expect(r.status).toBe(200)
      seen.push(...r.body.data.map((u: any) => u.user_id))
      if (!r.body.pagination.has_more) {
        expect(r.body.pagination.next_cursor).toBeNull()
        break
      }
      path = `/users?limit=2&updated_since=${since}&cursor=${encodeURIComponent(r.body.pagination.next_cursor)}`
    }
    expect(seen.length).toBeGreaterThanOrEqual(3)
    expect(new Set(seen).size).toBe(seen.length)
  })

  it('validates limit, dates and enum filters', async () => {
    verifies('conventions.timestamps', 'errors.unsupported_filter')
    expect(err(await api.get('/users?limit=0')).code).toBe('invalid_limit')
    expect(err(await api.get('/users?limit=101')).code).toBe('invalid_limit')
    expect(err(await api.get('/users?limit=abc')).code).toBe('invalid_limit')
    expect(err(await api.get('/users?updated_since=2026-01-01')).code).toBe('invalid_date')
    expect(err(await api.get('/users?status=trial'))).toMatchObject({ code: 'unsupported_filter', field: 'status' })
  })
})

describe('PATCH /users/{usr}', () => {
  it('merges external_ids key by key with null clearing, and sets status and retention', async () => {
    verifies('users.patch')
    const u = (await api.post('/users', { email: uniqueEmail('patch'), external_ids: { crm: 'a', erp: 'b' } })).body
    const r = await api.patch(`/users/${u.user_id}`, {
      external_ids: { crm: null, billing: 'z' },
      status: 'suspended',
      transcript_retention_days: 90,
      limits: { max_builds_per_day: 3 },
    })
    expect(r.status).toBe(200)
    expect(r.body.external_ids).toEqual({ erp: 'b', billing: 'z' })
    expect(r.body).toMatchObject({
      status: 'suspended',
      transcript_retention_days: 90,
      limits: { max_builds_per_day: 3 },
    })
    expect(Date.parse(r.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(u.updated_at))
  })

  it('refuses an empty patch, status trial and unknown keys, writing nothing', async () => {
    verifies('errors.empty_update', 'users.patch')
    const u = (await api.post('/users', { email: uniqueEmail('patch2') })).body
    expect(err(await api.patch(`/users/${u.user_id}`, {})).code).toBe('empty_update')
    expect(err(await api.request('PATCH', `/users/${u.user_id}`))).toMatchObject({ code: 'empty_update' })
    expect(err(await api.patch(`/users/${u.user_id}`, { status: 'trial' }))).toMatchObject({
      code: 'validation_error',
      field: 'status',
    })
    expect(err(await api.patch(`/users/${u.user_id}`, { status: 'suspended', plan: 'starter' }))).toMatchObject({
      code: 'unsupported_field',
      field: 'plan',
    })
    expect((await api.get(`/users/${u.user_id}`)).body.status).toBe('active')
    expect((await api.patch('/users/usr_987654321', { status: 'active' })).status).toBe(404)
  })
})

describe('concurrent writes', () => {
  it('parallel creates each get their own ids and all persist (PGlite serialises, PostgreSQL runs them at once)', async () => {
    verifies('storage.migrations')
    const emails = Array.from({ length: 20 }, () => uniqueEmail('par'))
    const results = await Promise.all(emails.map((email) => api.post('/users', { email })))
    expect(results.map((r) => r.status)).toEqual(emails.map(() => 201))
    const ids = results.map((r) => r.body.user_id)
    expect(new Set(ids).size).toBe(20)
    const reads = await Promise.all(ids.map((id) => api.get(`/users/${id}`)))
    expect(reads.map((r) => r.body.email)).toEqual(emails)
    // The same e-mail raced 5 times: exactly one wins, the rest are 409 and nothing is half-written.
    const contested = uniqueEmail('race')
    const race = await Promise.all(Array.from({ length: 5 }, () => api.post('/users', { email: contested })))
    expect(race.filter((r) => r.status === 201)).toHaveLength(1)
    expect(race.filter((r) => r.status === 409).map((r) => r.body.error.code)).toEqual(Array(4).fill('email_exists'))
  })
})
