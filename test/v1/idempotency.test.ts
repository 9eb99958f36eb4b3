import { describe, expect, inject, it } from 'vitest'
import { createApi, err, uniqueEmail } from '../helpers/api'
import { createTenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const base = inject('base')
const master = createApi(base, inject('masterKey'))
const key = () => `idem-${Date.now()}-${Math.random().toString(36).slice(2)}`

describe('Idempotency-Key on POST', () => {
  it('replays the stored answer for the same key and body, with Idempotent-Replayed: true', async () => {
    verifies('idempotency.header')
    const k = key()
    const body = { email: uniqueEmail('idem') }
    const first = await master.post('/users', body, { headers: { 'idempotency-key': k } })
    expect(first.status).toBe(201)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const again = await master.post('/users', body, { headers: { 'idempotency-key': k } })
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    const { meta: m1, ...a } = first.body
    const { meta: m2, ...b } = again.body
    expect(b).toEqual(a)
    expect(m2.request_id).not.toBe(m1.request_id)
    // One user was created, not two.
    expect((await master.get(`/users/${first.body.user_id}`)).body.email).toBe(body.email)
  })

  it('the same key with another body is 409 idempotency_key_reused', async () => {
    verifies('idempotency.header')
    const k = key()
    await master.post('/users', { email: uniqueEmail('idem') }, { headers: { 'idempotency-key': k } })
    const r = await master.post('/users', { email: uniqueEmail('idem') }, { headers: { 'idempotency-key': k } })
    expect(r.status).toBe(409)
    expect(err(r)).toMatchObject({ code: 'idempotency_key_reused', field: 'Idempotency-Key' })
  })

  it('a concurrent repeat while the first runs is 409 idempotency_key_in_use or a replay, never a second create', async () => {
    verifies('idempotency.header')
    const k = key()
    const body = { email: uniqueEmail('idem'), password: 'a sufficiently long password' }
    const results = await Promise.all(
      Array.from({ length: 4 }, () => master.post('/users', body, { headers: { 'idempotency-key': k } })),
    )
    const created = results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') !== 'true')
    expect(created).toHaveLength(1)
    for (const r of results.filter((x) => x !== created[0])) {
      if (r.status === 409) expect(err(r).code).toBe('idempotency_key_in_use')
      else expect(r.headers.get('idempotent-replayed')).toBe('true')
    }
    expect(results.some((r) => r.status === 409)).toBe(true)
  })

  it('4xx answers are stored and replayed too; keys are scoped by credential and path; bad keys are refused', async () => {
    verifies('idempotency.header')
    const k = key()
    const bad = await master.post('/users', { email: 'nope' }, { headers: { 'idempotency-key': k } })
    expect(err(bad).code).toBe('invalid_email')
    const replay = await master.post('/users', { email: 'nope' }, { headers: { 'idempotency-key': k } })
    expect(err(replay).code).toBe('invalid_email')
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    // Same key on another path is independent.
    const other = await master.post(
      '/users/usr_987654321/credentials',
      { scopes: ['accounts:read'] },
      { headers: { 'idempotency-key': k } },
    )
    expect(other.status).toBe(404)
    expect(other.headers.get('idempotent-replayed')).toBeNull()
    expect(
      err(await master.post('/users', { email: uniqueEmail() }, { headers: { 'idempotency-key': 'has space' } })),
    ).toMatchObject({ code: 'validation_error', field: 'Idempotency-Key' })
  })

  it('the resolved account is part of the scope: the master key acting for A, then B, gets two answers', async () => {
    verifies('idempotency.account-scope')
    const [a, b] = [await createTenant(master), await createTenant(master)]
    const k = key()
    const body = { url: 'http://127.0.0.1:9/scoped', events: ['conversation.started'] }
    const as = (acc: string) => ({ headers: { 'idempotency-key': k, 'x-svc-account': acc } })
    const forA = await master.post('/webhooks/endpoints', body, as(a.accountId))
    expect(forA.status).toBe(201)
    expect(forA.body.account_id).toBe(a.accountId)
    const forB = await master.post('/webhooks/endpoints', body, as(b.accountId))
    expect(forB.status).toBe(201)
    expect(forB.headers.get('idempotent-replayed')).toBeNull()
    expect(forB.body.account_id).toBe(b.accountId)
    expect(forB.body.endpoint_id).not.toBe(forA.body.endpoint_id)
    expect((await b.api.get(`/webhooks/endpoints/${forB.body.endpoint_id}`)).status).toBe(200)
    // Each account still gets its own answer replayed.
    for (const [acc, first] of [
      [a.accountId, forA],
      [b.accountId, forB],
    ] as const) {
      const again = await master.post('/webhooks/endpoints', body, as(acc))
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      expect(again.body.endpoint_id).toBe(first.body.endpoint_id)
    }
  })

  it('is documented on POST operations in the OpenAPI document', async () => {
    verifies('idempotency.header', 'openapi.document')
    const doc = (await createApi(base).get('/openapi.json')).body
    const op = doc.paths['/users'].post
    expect(op.parameters.find((p: any) => p.name === 'Idempotency-Key')).toMatchObject({
      in: 'header',
      required: false,
    })
    expect(op.responses['409'].description).toContain('idempotency_key_reused')
    expect(doc.paths['/users'].get.parameters.find((p: any) => p.name === 'Idempotency-Key')).toBeUndefined()
  })
})
