// Phone numbers over HTTP against the shared server: create (every field), read, list with its agent_id
// filter and cursor, patch (label, assign, unassign), delete, E.164 validation, number_taken across
// tenants and under a race, agents of other tenants refused, scopes, multi-account keys and tenant
// isolation. Then, on a server of its own, findNumberByE164 read straight from the database.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, err, expectError } from '../helpers/api'
import { freshNumber } from '../helpers/phone'
import { startSeededServer, type SeededServer } from '../helpers/agents'
import { buildAgent } from '../helpers/build'
import { withDatabase } from '../helpers/db'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'
import { until } from '../helpers/wait'
import { findNumberByE164 } from '~/domain/phone-numbers/numbers'

const KEYS = ['number_id', 'account_id', 'e164', 'provider', 'agent_id', 'label', 'created_at', 'updated_at']
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe('phone numbers (shared server)', () => {
  const base = inject('base')
  const master = createApi(base, inject('masterKey'))
  let t: Tenant
  let other: Tenant
  let site: TestSite
  let agentA: string
  let agentB: string
  let otherAgent: string

  beforeAll(async () => {
    site = await serveSite({
      '/': { body: html('Harbour Taxis', '<h1>Harbour Taxis</h1><p>Harbour Taxis drives people around Hobart.</p>') },
    })
    ;[t, other] = await Promise.all([createTenant(master), createTenant(master)])
    ;[agentA, agentB, otherAgent] = await Promise.all([
      buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' }),
      buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' }),
      buildAgent(other.api, other.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' }),
    ])
  }, 90_000)
  afterAll(async () => {
    await site?.close()
  })

  const create = (body: Record<string, unknown>, api = t.api) => api.post('/phone-numbers', body)

  it('creates a number with every field, reads, patches, unassigns and deletes it', async () => {
    verifies('phone-numbers.crud', 'phone-numbers.agent')
    const e164 = freshNumber()
    const c = await create({ e164, agent_id: agentA, label: 'Front desk' })
    expect(c.status, c.text).toBe(201)
    expect(
      Object.keys(c.body)
        .filter((k) => k !== 'meta')
        .sort(),
    ).toEqual([...KEYS].sort())
    expect(c.body).toMatchObject({
      number_id: expect.stringMatching(/^num_\d+$/),
      account_id: t.accountId,
      e164,
      provider: 'simulated',
      agent_id: agentA,
      label: 'Front desk',
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
    const id = c.body.number_id as string
    const { meta: _m, ...created } = c.body

    const got = await t.api.get(`/phone-numbers/${id}`)
    expect(got.status).toBe(200)
    expect(got.body).toMatchObject(created)

    // Optional fields absent: null, never missing.
    const bare = await create({ e164: freshNumber() })
    expect(bare.status).toBe(201)
    expect(bare.body).toMatchObject({ agent_id: null, label: null, provider: 'simulated' })

    const relabelled = await t.api.patch(`/phone-numbers/${id}`, { label: 'Reception' })
    expect(relabelled.status).toBe(200)
    expect(relabelled.body).toMatchObject({ number_id: id, e164, label: 'Reception', agent_id: agentA })
    expect(Date.parse(relabelled.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at))
    expect(relabelled.body.created_at).toBe(created.created_at)

    const reassigned = await t.api.patch(`/phone-numbers/${id}`, { agent_id: agentB })
    expect(reassigned.body).toMatchObject({ agent_id: agentB, label: 'Reception' })

    const unassigned = await t.api.patch(`/phone-numbers/${id}`, { agent_id: null, label: null })
    expect(unassigned.status).toBe(200)
    expect(unassigned.body).toMatchObject({ agent_id: null, label: null, e164 })
    expect((await t.api.get(`/phone-numbers/${id}`)).body).toMatchObject({ agent_id: null, label: null })

    const del = await t.api.delete(`/phone-numbers/${id}`)
    expect(del.status).toBe(204)
    expect(del.text).toBe('')
    expectError(await t.api.get(`/phone-numbers/${id}`), 404, 'not_found')
    expectError(await t.api.patch(`/phone-numbers/${id}`, { label: 'x' }), 404, 'not_found')
    expectError(await t.api.delete(`/phone-numbers/${id}`), 404, 'not_found')
    // Released: the number may be added again (here by another account).
    const again = await create({ e164 }, other.api)
    expect(again.status).toBe(201)
    expect(again.body.number_id).not.toBe(id)
  })

  it('lists newest first with keyset pages, filters by agent_id and binds the cursor to the filter', async () => {
    verifies('phone-numbers.list')
    const unassigned = await create({ e164: freshNumber() })
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const r = await create({ e164: freshNumber(), agent_id: agentB, label: `line ${i}` })
      expect(r.status).toBe(201)
      ids.unshift(r.body.number_id)
    }
    const first = await t.api.get(`/phone-numbers?agent_id=${agentB}&limit=2`)
    expect(first.status).toBe(200)
    expect(first.body.pagination).toMatchObject({ limit: 2, has_more: true, next_cursor: expect.any(String) })
    expect(first.body.meta).toMatchObject({ request_id: expect.any(String), environment: 'production' })
    const cursor = encodeURIComponent(first.body.pagination.next_cursor)
    const second = await t.api.get(`/phone-numbers?agent_id=${agentB}&limit=2&cursor=${cursor}`)
    expect(second.status).toBe(200)
    expect(second.body.pagination).toEqual({ limit: 2, has_more: false, next_cursor: null })
    const listed = [...first.body.data, ...second.body.data]
    expect(listed.map((n: any) => n.number_id)).toEqual(ids)
    for (const n of listed) expect(Object.keys(n).sort()).toEqual([...KEYS].sort())
    expect(listed.every((n: any) => n.agent_id === agentB)).toBe(true)

    const all = await t.api.get('/phone-numbers?limit=100')
    const allIds = all.body.data.map((n: any) => n.number_id)
    expect(allIds).toEqual(expect.arrayContaining([...ids, unassigned.body.number_id]))
    expect(all.body.data.every((n: any) => n.account_id === t.accountId)).toBe(true)
    // An agent with no numbers (or another tenant's agent): an empty page, not an error.
    expect((await t.api.get(`/phone-numbers?agent_id=${otherAgent}`)).body.data).toEqual([])

    // The cursor is bound to its filter set and limit.
    expectError(await t.api.get(`/phone-numbers?limit=2&cursor=${cursor}`), 400, 'invalid_cursor')
    expectError(await t.api.get(`/phone-numbers?agent_id=${agentA}&limit=2&cursor=${cursor}`), 400, 'invalid_cursor')
    expectError(await t.api.get('/phone-numbers?cursor=garbage'), 400, 'invalid_cursor')
    // Malformed filters.
    expectError(await t.api.get('/phone-numbers?agent_id=agent-1'), 400, 'invalid_id', 'agent_id')
    expectError(await t.api.get('/phone-numbers?limit=0'), 400, 'invalid_limit')
    expectError(await t.api.get('/phone-numbers?colour=red'), 400, 'unsupported_filter', 'colour')
  })

  it('accepts only valid international numbers and stores them in E.164 form', async () => {
    verifies('phone-numbers.e164')
    const n = freshNumber()
    const formatted = `+1 (${n.slice(2, 5)}) ${n.slice(5, 8)}-${n.slice(8)}`
    const c = await create({ e164: formatted })
    expect(c.status, c.text).toBe(201)
    expect(c.body.e164).toBe(n)
    // The same number written another way is the same number.
    expectError(await create({ e164: n }), 409, 'number_taken', 'e164')

    const bad: unknown[] = [
      n.slice(2), // national form
      `(${n.slice(2, 5)}) ${n.slice(5, 8)}-${n.slice(8)}`, // national form, formatted
      `00${n.slice(1)}`, // international prefix instead of +
      'hello',
      '+',
      '',
      '+1415555012345678', // too long
      `${n}9999`, // too long for its country
      '+12005550100', // no such US area code
      '+999123456', // no such country code
      `${n} ext. 12`,
      `${n}abc`,
      `+1 415 555 0123${' '.repeat(40)}`,
      Number(n.slice(1)), // a number, not a string
      null,
      true,
      [n],
      { e164: n },
    ]
    for (const e164 of bad) expectError(await create({ e164 }), 400, 'invalid_phone', 'e164')
    expectError(await create({ label: 'no number' }), 400, 'validation_error', 'e164')
  })

  it('a number held by any account is 409 number_taken, also when two tenants race for it', async () => {
    verifies('phone-numbers.taken')
    const e164 = freshNumber()
    expect((await create({ e164 })).status).toBe(201)
    expectError(await create({ e164 }), 409, 'number_taken', 'e164')
    expectError(await create({ e164, label: 'mine now' }, other.api), 409, 'number_taken', 'e164')

    const contested = freshNumber()
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => create({ e164: contested }, i % 2 ? other.api : t.api)),
    )
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409])
    for (const r of answers.filter((x) => x.status === 409)) expect(err(r).code).toBe('number_taken')
    const winner = answers.find((r) => r.status === 201)!.body
    const owners = [t, other].filter((x) => x.accountId === winner.account_id)
    expect(owners).toHaveLength(1)
    const listed = await owners[0].api.get('/phone-numbers?limit=100')
    expect(listed.body.data.filter((x: any) => x.e164 === contested)).toHaveLength(1)
  })

  it('refuses unknown fields, empty patches, bad values and agents that are not the account’s', async () => {
    verifies('phone-numbers.agent', 'phone-numbers.crud')
    const c = await create({ e164: freshNumber() })
    const id = c.body.number_id
    expectError(await create({ e164: freshNumber(), provider: 'twilio' }), 400, 'unsupported_field', 'provider')
    expectError(await t.api.patch(`/phone-numbers/${id}`, { e164: freshNumber() }), 400, 'unsupported_field', 'e164')
    expectError(await t.api.patch(`/phone-numbers/${id}`, {}), 400, 'empty_update')
    expectError(await t.api.request('PATCH', `/phone-numbers/${id}`), 400, 'empty_update')
    expectError(await t.api.patch(`/phone-numbers/${id}`, { label: 7 }), 400, 'validation_error', 'label')
    expectError(await t.api.patch(`/phone-numbers/${id}`, { label: 'x'.repeat(201) }), 400, 'validation_error', 'label')
    expectError(await t.api.patch(`/phone-numbers/${id}`, { agent_id: 'bob' }), 400, 'invalid_id', 'agent_id')
    expectError(await create({ e164: freshNumber(), agent_id: 12 }), 400, 'invalid_id', 'agent_id')
    expectError(await t.api.get('/phone-numbers/num_x'), 400, 'invalid_id')
    expectError(await t.api.get('/phone-numbers/whk_1'), 400, 'invalid_id')
    expectError(await t.api.get('/phone-numbers/num_999999999'), 404, 'not_found')

    // Another tenant's agent, or an unknown one: 404 agent_not_found, as on POST /conversations; nothing written.
    const e164 = freshNumber()
    expectError(await create({ e164, agent_id: otherAgent }), 404, 'agent_not_found')
    expectError(await create({ e164, agent_id: 'agt_999999999' }), 404, 'agent_not_found')
    expect((await create({ e164 })).status).toBe(201)
    expectError(await t.api.patch(`/phone-numbers/${id}`, { agent_id: otherAgent }), 404, 'agent_not_found')
    expect((await t.api.get(`/phone-numbers/${id}`)).body.agent_id).toBeNull()
  })

  it('writes are audited by the pipeline, refusals with their error code', async () => {
    verifies('phone-numbers.crud')
    const e164 = freshNumber()
    const ok = await create({ e164 }, t.api)
    const taken = await create({ e164 }, other.api)
    expect([ok.status, taken.status]).toEqual([201, 409])
    const ids = [ok.headers.get('x-request-id'), taken.headers.get('x-request-id')]
    const rows = await until('the audit rows', async () => {
      const found = []
      for (const who of [t, other]) {
        const r = await master.get(`/audit?credential_id=${who.keyId}&limit=100`)
        found.push(...r.body.data.filter((x: any) => ids.includes(x.request_id)))
      }
      return found.length === 2 ? found : null
    })
    const byId = new Map(rows.map((x: any) => [x.request_id, x]))
    expect(byId.get(ids[0])).toMatchObject({
      method: 'POST',
      path: '/v1/phone-numbers',
      status_code: 201,
      error_code: null,
    })
    expect(byId.get(ids[1])).toMatchObject({
      status_code: 409,
      error_code: 'number_taken',
      account_ids: [other.accountId],
    })
  })

  it("another tenant's number answers 404 on read, patch and delete, and is left intact", async () => {
    verifies('phone-numbers.isolation', 'tenancy.isolation')
    const c = await create({ e164: freshNumber(), agent_id: agentA, label: 'Private line' })
    const id = c.body.number_id
    for (const r of [
      await other.api.get(`/phone-numbers/${id}`),
      await other.api.patch(`/phone-numbers/${id}`, { label: 'stolen' }),
      await other.api.patch(`/phone-numbers/${id}`, { agent_id: otherAgent }),
      await other.api.delete(`/phone-numbers/${id}`),
    ])
      expectError(r, 404, 'not_found')
    expect((await other.api.get('/phone-numbers?limit=100')).body.data.map((n: any) => n.number_id)).not.toContain(id)
    expect((await t.api.get(`/phone-numbers/${id}`)).body).toMatchObject({ label: 'Private line', agent_id: agentA })
    // Naming an account the key does not cover is refused outright.
    expectError(await t.api.get(`/phone-numbers?account_id=${other.accountId}`), 403, 'forbidden_account', 'account_id')
    expectError(
      await t.api.get('/phone-numbers', { headers: { 'x-svc-account': other.accountId } }),
      403,
      'forbidden_account',
    )
  })

  it('a key with several accounts acts for the one named by account_id or X-Svc-Account; the master key needs the header', async () => {
    verifies('phone-numbers.isolation')
    const theirs = await create({ e164: freshNumber() }, other.api)
    const multi = await master.post(`/users/${t.userId}/credentials`, {
      name: 'two accounts',
      scopes: ['agents:read', 'agents:write'],
      account_ids: [other.accountId],
    })
    expect(multi.status, multi.text).toBe(201)
    const k = createApi(base, multi.body.secret)
    // Home account by default.
    expectError(await k.get(`/phone-numbers/${theirs.body.number_id}`), 404, 'not_found')
    const viaQuery = await k.get(`/phone-numbers/${theirs.body.number_id}?account_id=${other.accountId}`)
    expect(viaQuery.status).toBe(200)
    const viaHeader = await k.get('/phone-numbers?limit=100', { headers: { 'x-svc-account': other.accountId } })
    expect(viaHeader.body.data.map((n: any) => n.number_id)).toContain(theirs.body.number_id)
    const made = await k.post(`/phone-numbers?account_id=${other.accountId}`, { e164: freshNumber() })
    expect(made.status).toBe(201)
    expect(made.body.account_id).toBe(other.accountId)
    // A repeated account_id is refused (one account per request here).
    expectError(
      await k.get(`/phone-numbers?account_id=${t.accountId}&account_id=${other.accountId}`),
      400,
      'validation_error',
    )

    expectError(await master.get('/phone-numbers'), 403, 'forbidden_account')
    const asMaster = await master.get(`/phone-numbers/${theirs.body.number_id}`, {
      headers: { 'x-svc-account': other.accountId },
    })
    expect(asMaster.status).toBe(200)
  })

  it('reads need agents:read and writes agents:write', async () => {
    verifies('phone-numbers.scopes')
    const c = await create({ e164: freshNumber() })
    const id = c.body.number_id
    const reader = await master.post(`/users/${t.userId}/credentials`, { name: 'reader', scopes: ['agents:read'] })
    const r = createApi(base, reader.body.secret)
    expect((await r.get('/phone-numbers')).status).toBe(200)
    expect((await r.get(`/phone-numbers/${id}`)).status).toBe(200)
    expectError(await r.post('/phone-numbers', { e164: freshNumber() }), 403, 'insufficient_scope')
    expectError(await r.patch(`/phone-numbers/${id}`, { label: 'x' }), 403, 'insufficient_scope')
    expectError(await r.delete(`/phone-numbers/${id}`), 403, 'insufficient_scope')
    const narrow = await master.post(`/users/${t.userId}/credentials`, {
      name: 'narrow',
      scopes: ['conversations:read'],
    })
    const n = createApi(base, narrow.body.secret)
    expectError(await n.get('/phone-numbers'), 403, 'insufficient_scope')
    expectError(await n.get(`/phone-numbers/${id}`), 403, 'insufficient_scope')
    expect((await t.api.get(`/phone-numbers/${id}`)).body.label).toBeNull()
  })
})

describe('findNumberByE164 (a server of its own, read from its database)', () => {
  let seeded: SeededServer<{ a: Tenant; b: Tenant }>
  beforeAll(async () => {
    seeded = await startSeededServer({
      prepare: async (m) => ({ a: await createTenant(m), b: await createTenant(m) }),
      agents: (p) => [{ accountId: p.a.accountId, agentType: 'phone' }],
    })
  }, 90_000)
  afterAll(async () => {
    await seeded?.server.stop('SIGKILL')
  })

  it('finds the number whatever account holds it, with its agent and provider; null for an unknown number', async () => {
    verifies('phone-numbers.lookup')
    const a = seeded.as(seeded.prepared.a.key)
    const b = seeded.as(seeded.prepared.b.key)
    const [agent] = seeded.agentIds
    const assigned = freshNumber()
    const bare = freshNumber()
    const x = await a.post('/phone-numbers', { e164: assigned, agent_id: agent })
    const y = await b.post('/phone-numbers', { e164: bare })
    expect([x.status, y.status]).toEqual([201, 201])
    await seeded.server.stop('SIGTERM')
    await withDatabase(seeded.server.dataDir, async (db) => {
      expect(await findNumberByE164(db.db, assigned)).toEqual({
        id: x.body.number_id,
        accountId: seeded.prepared.a.accountId,
        agentId: agent,
        e164: assigned,
        provider: 'simulated',
      })
      expect(await findNumberByE164(db.db, bare)).toEqual({
        id: y.body.number_id,
        accountId: seeded.prepared.b.accountId,
        agentId: null,
        e164: bare,
        provider: 'simulated',
      })
      expect(await findNumberByE164(db.db, freshNumber())).toBeNull()
    })
  })
})
