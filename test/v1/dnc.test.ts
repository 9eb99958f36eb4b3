// The do-not-call list over HTTP against the shared server: add (201, then 200 with the same entry for a
// number already listed, written any way), list with its phone filter and keyset cursor, delete, E.164
// validation, unknown fields, tenant isolation, multi-account keys and scopes.
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, expectError } from '../helpers/api'
import { freshNumber } from '../helpers/phone'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const KEYS = ['dnc_id', 'account_id', 'phone_e164', 'reason', 'source', 'created_at']
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe('do-not-call list (shared server)', () => {
  const base = inject('base')
  const master = createApi(base, inject('masterKey'))
  let t: Tenant
  let other: Tenant

  beforeAll(async () => {
    ;[t, other] = await Promise.all([createTenant(master), createTenant(master)])
  })

  it('adds a number (201), answers 200 with the same entry when it is listed again, lists and deletes it', async () => {
    verifies('outbound.dnc')
    const phone = freshNumber()
    const c = await t.api.post('/dnc', { phone, reason: 'Asked by e-mail' })
    expect(c.status, c.text).toBe(201)
    expect(
      Object.keys(c.body)
        .filter((k) => k !== 'meta')
        .sort(),
    ).toEqual([...KEYS].sort())
    expect(c.body).toMatchObject({
      dnc_id: expect.stringMatching(/^dnc_\d+$/),
      account_id: t.accountId,
      phone_e164: phone,
      reason: 'Asked by e-mail',
      source: 'api',
      created_at: expect.stringMatching(ISO),
    })
    const { meta: _m, ...entry } = c.body

    // The same number written another way: 200 with the existing entry, reason unchanged.
    const formatted = `+1 (${phone.slice(2, 5)}) ${phone.slice(5, 8)}-${phone.slice(8)}`
    const again = await t.api.post('/dnc', { phone: formatted, reason: 'again' })
    expect(again.status, again.text).toBe(200)
    expect(again.body).toMatchObject(entry)

    // No reason: null.
    const bare = await t.api.post('/dnc', { phone: freshNumber() })
    expect(bare.status).toBe(201)
    expect(bare.body.reason).toBeNull()

    const filtered = await t.api.get(`/dnc?phone=${encodeURIComponent(phone)}`)
    expect(filtered.status, filtered.text).toBe(200)
    expect(filtered.body.data).toEqual([entry])
    // A + sent unencoded arrives as a space: still the same number.
    expect((await t.api.get(`/dnc?phone=${phone}`)).body.data).toEqual([entry])
    expect((await t.api.get(`/dnc?phone=${encodeURIComponent(freshNumber())}`)).body.data).toEqual([])

    const del = await t.api.delete(`/dnc/${entry.dnc_id}`)
    expect(del.status).toBe(204)
    expect(del.text).toBe('')
    expect((await t.api.get(`/dnc?phone=${encodeURIComponent(phone)}`)).body.data).toEqual([])
    expectError(await t.api.delete(`/dnc/${entry.dnc_id}`), 404, 'not_found')
    // Listed again after the delete: a new entry, 201.
    const relisted = await t.api.post('/dnc', { phone })
    expect(relisted.status).toBe(201)
    expect(relisted.body.dnc_id).not.toBe(entry.dnc_id)
  })

  it('lists newest first with keyset pages; the cursor is bound to the filter', async () => {
    verifies('outbound.dnc')
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const r = await other.api.post('/dnc', { phone: freshNumber(), reason: `r${i}` })
      expect(r.status).toBe(201)
      ids.unshift(r.body.dnc_id)
    }
    const first = await other.api.get('/dnc?limit=2')
    expect(first.status).toBe(200)
    expect(first.body.pagination).toMatchObject({ limit: 2, has_more: true, next_cursor: expect.any(String) })
    const cursor = encodeURIComponent(first.body.pagination.next_cursor)
    const second = await other.api.get(`/dnc?limit=2&cursor=${cursor}`)
    expect(second.status).toBe(200)
    const listed = [...first.body.data, ...second.body.data].map((e: any) => e.dnc_id)
    expect(listed.slice(0, 3)).toEqual(ids)
    for (const e of first.body.data) expect(Object.keys(e).sort()).toEqual([...KEYS].sort())
    expectError(
      await other.api.get(`/dnc?limit=2&cursor=${cursor}&phone=${encodeURIComponent(freshNumber())}`),
      400,
      'invalid_cursor',
    )
    expectError(await other.api.get('/dnc?cursor=garbage'), 400, 'invalid_cursor')
    expectError(await other.api.get('/dnc?limit=0'), 400, 'invalid_limit')
    expectError(await other.api.get('/dnc?colour=red'), 400, 'unsupported_filter', 'colour')
  })

  it('refuses numbers that are not international E.164, unknown fields and bad values', async () => {
    verifies('outbound.dnc')
    const n = freshNumber()
    for (const phone of [n.slice(2), `00${n.slice(1)}`, 'hello', '+', '', '+1415555012345678', 14155550123, null]) {
      expectError(await t.api.post('/dnc', { phone }), 400, 'invalid_phone', 'phone')
    }
    expectError(await t.api.post('/dnc', {}), 400, 'validation_error', 'phone')
    expectError(await t.api.get('/dnc?phone=hello'), 400, 'invalid_phone', 'phone')
    expectError(await t.api.post('/dnc', { phone: n, source: 'import' }), 400, 'unsupported_field', 'source')
    expectError(await t.api.post('/dnc', { phone: n, reason: 7 }), 400, 'validation_error', 'reason')
    expectError(await t.api.post('/dnc', { phone: n, reason: 'x'.repeat(501) }), 400, 'validation_error', 'reason')
    expectError(await t.api.delete('/dnc/num_1'), 400, 'invalid_id')
    expectError(await t.api.delete('/dnc/dnc_999999999'), 404, 'not_found')
  })

  it("keeps tenants apart: another account's entry is 404 and untouched; a number is listed per account", async () => {
    verifies('outbound.dnc-isolation')
    const phone = freshNumber()
    const mine = await t.api.post('/dnc', { phone })
    expect(mine.status).toBe(201)
    // The same number in another account is that account's own entry.
    const theirs = await other.api.post('/dnc', { phone })
    expect(theirs.status).toBe(201)
    expect(theirs.body.dnc_id).not.toBe(mine.body.dnc_id)
    expect(theirs.body.account_id).toBe(other.accountId)

    expectError(await other.api.delete(`/dnc/${mine.body.dnc_id}`), 404, 'not_found')
    expect((await t.api.get(`/dnc?phone=${encodeURIComponent(phone)}`)).body.data).toHaveLength(1)
    const listed = (await other.api.get('/dnc?limit=100')).body.data
    expect(listed.every((e: any) => e.account_id === other.accountId)).toBe(true)
    expect(listed.map((e: any) => e.dnc_id)).not.toContain(mine.body.dnc_id)
    expectError(await t.api.get(`/dnc?account_id=${other.accountId}`), 403, 'forbidden_account', 'account_id')
  })

  it('a key with several accounts acts for the one named by account_id or X-Svc-Account', async () => {
    verifies('outbound.dnc-isolation')
    const key = await master.post(`/users/${t.userId}/credentials`, {
      name: 'multi',
      scopes: ['outbound:read', 'outbound:write'],
      account_ids: [other.accountId],
    })
    expect(key.status, key.text).toBe(201)
    const k = createApi(base, key.body.secret)
    const made = await k.post(`/dnc?account_id=${other.accountId}`, { phone: freshNumber() })
    expect(made.status, made.text).toBe(201)
    expect(made.body.account_id).toBe(other.accountId)
    const viaHeader = await k.get('/dnc?limit=100', { headers: { 'X-Svc-Account': other.accountId } })
    expect(viaHeader.status).toBe(200)
    expect(viaHeader.body.data.map((e: any) => e.dnc_id)).toContain(made.body.dnc_id)
    const del = await k.delete(`/dnc/${made.body.dnc_id}`, { headers: { 'X-Svc-Account': other.accountId } })
    expect(del.status).toBe(204)
  })

  it('reads need outbound:read and writes outbound:write', async () => {
    verifies('outbound.dnc-scopes')
    const e = await t.api.post('/dnc', { phone: freshNumber() })
    const reader = await master.post(`/users/${t.userId}/credentials`, { name: 'reader', scopes: ['outbound:read'] })
    const r = createApi(base, reader.body.secret)
    expect((await r.get('/dnc')).status).toBe(200)
    expectError(await r.post('/dnc', { phone: freshNumber() }), 403, 'insufficient_scope')
    expectError(await r.delete(`/dnc/${e.body.dnc_id}`), 403, 'insufficient_scope')
    const agentsOnly = await master.post(`/users/${t.userId}/credentials`, { name: 'agents', scopes: ['agents:write'] })
    const a = createApi(base, agentsOnly.body.secret)
    expectError(await a.get('/dnc'), 403, 'insufficient_scope')
    expectError(await a.post('/dnc', { phone: freshNumber() }), 403, 'insufficient_scope')
  })
})
