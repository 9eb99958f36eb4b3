// Contact lists over HTTP against the shared server: create and list lists of an agent, import CSV
// (BOM, quoted commas and newlines, national numbers in the list's default region, duplicates within the
// file and against the list, invalid rows with their lines, do-not-call numbers flagged) and JSON, the
// 10 MB cap, items with their keyset cursor, tenant isolation and scopes.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, type ApiResponse, expectError } from '../helpers/api'
import { freshNumber } from '../helpers/phone'
import { buildAgent } from '../helpers/build'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const LIST_KEYS = ['list_id', 'agent_id', 'name', 'default_region', 'item_count', 'created_at', 'updated_at']
const ITEM_KEYS = ['item_id', 'phone_e164', 'name', 'timezone', 'variables', 'dnc', 'created_at']

describe('contact lists (shared server)', () => {
  const base = inject('base')
  const master = createApi(base, inject('masterKey'))
  let t: Tenant
  let other: Tenant
  let site: TestSite
  let agent: string
  let otherAgent: string

  /** POST a multipart form with one part `file` (and any extra parts). */
  async function upload(path: string, csv: string | Uint8Array, key = t.key, extra: Record<string, string> = {}) {
    const form = new FormData()
    form.append('file', new Blob([csv as BlobPart], { type: 'text/csv' }), 'contacts.csv')
    for (const [k, v] of Object.entries(extra)) form.append(k, v)
    const res = await fetch(base + path, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })
    const text = await res.text()
    return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null } as ApiResponse
  }

  async function allItems(listId: string, api = t.api) {
    const r = await api.get(`/lists/${listId}/items?limit=1000`)
    expect(r.status, r.text).toBe(200)
    return r.body.data as any[]
  }

  beforeAll(async () => {
    site = await serveSite({
      '/': { body: html('Harbour Taxis', '<h1>Harbour Taxis</h1><p>Harbour Taxis drives people around Hobart.</p>') },
    })
    ;[t, other] = await Promise.all([createTenant(master), createTenant(master)])
    ;[agent, otherAgent] = await Promise.all([
      buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' }),
      buildAgent(other.api, other.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' }),
    ])
  }, 90_000)
  afterAll(async () => {
    await site?.close()
  })

  it('creates lists of an agent and lists them newest first with keyset pages', async () => {
    verifies('outbound.lists')
    const c = await t.api.post(`/agents/${agent}/lists`, { name: '  Spring leads ', default_region: 'GB' })
    expect(c.status, c.text).toBe(201)
    expect(
      Object.keys(c.body)
        .filter((k) => k !== 'meta')
        .sort(),
    ).toEqual([...LIST_KEYS].sort())
    expect(c.body).toMatchObject({
      list_id: expect.stringMatching(/^lst_\d+$/),
      agent_id: agent,
      name: 'Spring leads',
      default_region: 'GB',
      item_count: 0,
    })
    const bare = await t.api.post(`/agents/${agent}/lists`, { name: 'Plain' })
    expect(bare.status).toBe(201)
    expect(bare.body.default_region).toBeNull()
    const third = await t.api.post(`/agents/${agent}/lists`, { name: 'Third', default_region: null })
    expect(third.status).toBe(201)

    const first = await t.api.get(`/agents/${agent}/lists?limit=2`)
    expect(first.status, first.text).toBe(200)
    expect(first.body.pagination).toMatchObject({ limit: 2, has_more: true })
    const cursor = encodeURIComponent(first.body.pagination.next_cursor)
    const second = await t.api.get(`/agents/${agent}/lists?limit=2&cursor=${cursor}`)
    const ids = [...first.body.data, ...second.body.data].map((l: any) => l.list_id)
    expect(ids.slice(0, 3)).toEqual([third.body.list_id, bare.body.list_id, c.body.list_id])

    expectError(await t.api.post(`/agents/${agent}/lists`, { name: '' }), 400, 'validation_error', 'name')
    expectError(await t.api.post(`/agents/${agent}/lists`, {}), 400, 'validation_error', 'name')
    for (const default_region of ['gb', 'GBR', 'XX', 7])
      expectError(
        await t.api.post(`/agents/${agent}/lists`, { name: 'x', default_region }),
        400,
        'validation_error',
        'default_region',
      )
    expectError(
      await t.api.post(`/agents/${agent}/lists`, { name: 'x', kind: 'csv' }),
      400,
      'unsupported_field',
      'kind',
    )
    expectError(await t.api.post('/agents/agt_999999999/lists', { name: 'x' }), 404, 'agent_not_found')
    expectError(await t.api.get('/lists/lst_999999999/items'), 404, 'not_found')
    expectError(await t.api.get('/lists/lst_x/items'), 400, 'invalid_id')
  })

  it('imports a CSV: BOM, quoted commas and newlines, national numbers, duplicates, invalid rows, DNC flagged', async () => {
    verifies('outbound.lists-import')
    const list = (await t.api.post(`/agents/${agent}/lists`, { name: 'CSV', default_region: 'GB' })).body
    const [a, b, c, listed] = [freshNumber(), freshNumber(), freshNumber(), freshNumber()]
    expect((await t.api.post('/dnc', { phone: listed, reason: 'asked' })).status).toBe(201)
    const csv =
      '\uFEFFPhone,Name,Timezone,plan,notes\r\n' + // line 1 (header, BOM, any case)
      `${a},"Doe, Jane",America/New_York,gold,"first line\nsecond line"\r\n` + // lines 2-3
      '020 7946 0958,Harbour Office,europe/london,silver,\r\n' + // line 4: national, GB
      `${a},Jane again,,,\r\n` + // line 5: duplicate within the file
      'not-a-number,Nobody,,,\r\n' + // line 6: invalid phone
      `${b},Bad Zone,Mars/Olympus,,\r\n` + // line 7: invalid timezone
      `${c},Too,Few\r\n` + // line 8: wrong field count
      '\r\n' + // line 9: empty, skipped
      `${listed},Listed Person,UTC,bronze,"says ""no"""\r\n` + // line 10: on the DNC list
      `,No Phone,,,\r\n` // line 11: missing phone
    const r = await upload(`/lists/${list.list_id}/import`, csv)
    expect(r.status, r.text).toBe(200)
    expect(r.body.imported).toBe(3)
    expect(r.body.duplicates).toBe(1)
    expect(r.body.invalid.map((i: any) => i.line)).toEqual([6, 7, 8, 11])
    for (const i of r.body.invalid) expect(i.reason).toEqual(expect.any(String))
    expect(r.body.invalid[1].reason).toMatch(/timezone/)
    expect(r.body.invalid[3].reason).toMatch(/phone/)
    expect(r.body.list).toMatchObject({ list_id: list.list_id, item_count: 3, name: 'CSV' })

    const items = await allItems(list.list_id)
    expect(items).toHaveLength(3)
    for (const i of items) expect(Object.keys(i).sort()).toEqual([...ITEM_KEYS].sort())
    const byPhone = new Map(items.map((i) => [i.phone_e164, i]))
    expect(byPhone.get(a)).toMatchObject({
      name: 'Doe, Jane',
      timezone: 'America/New_York',
      variables: { plan: 'gold', notes: 'first line\nsecond line' },
      dnc: false,
    })
    expect(byPhone.get('+442079460958')).toMatchObject({
      name: 'Harbour Office',
      timezone: 'Europe/London',
      variables: { plan: 'silver' },
      dnc: false,
    })
    expect(byPhone.get(listed)).toMatchObject({ dnc: true, timezone: 'UTC', variables: { notes: 'says "no"' } })

    // Importing again: every number is already on the list.
    const again = await upload(`/lists/${list.list_id}/import`, `phone\n${a}\n${b}\n`)
    expect(again.status, again.text).toBe(200)
    expect(again.body).toMatchObject({ imported: 1, duplicates: 1, invalid: [] })
    expect(again.body.list.item_count).toBe(4)
    // The DNC flag follows the do-not-call list.
    const entry = (await t.api.get(`/dnc?phone=${encodeURIComponent(listed)}`)).body.data[0]
    expect((await t.api.delete(`/dnc/${entry.dnc_id}`)).status).toBe(204)
    expect((await allItems(list.list_id)).find((i) => i.phone_e164 === listed).dnc).toBe(false)
  })

  it('without a default region only international numbers are taken', async () => {
    verifies('outbound.lists-import')
    const list = (await t.api.post(`/agents/${agent}/lists`, { name: 'No region' })).body
    const n = freshNumber()
    const r = await upload(`/lists/${list.list_id}/import`, `phone,name\n020 7946 0958,Office\n${n},Ok\n`)
    expect(r.status, r.text).toBe(200)
    expect(r.body).toMatchObject({ imported: 1, duplicates: 0 })
    expect(r.body.invalid).toEqual([{ line: 2, reason: expect.stringMatching(/international/) }])
  })

  it('imports JSON contacts, variables included', async () => {
    verifies('outbound.lists-import')
    const list = (await t.api.post(`/agents/${agent}/lists`, { name: 'JSON', default_region: 'US' })).body
    const [a, b] = [freshNumber(), freshNumber()]
    const r = await t.api.post(`/lists/${list.list_id}/import`, {
      contacts: [
        { phone: a, name: 'Ann', timezone: 'America/Chicago', variables: { plan: 'gold', seats: 3 } },
        { phone: `(${b.slice(2, 5)}) ${b.slice(5, 8)}-${b.slice(8)}`, company: 'Acme' },
        { phone: a },
        { phone: 'nope' },
        'not an object',
        { phone: freshNumber(), timezone: 'Nowhere/Special' },
      ],
    })
    expect(r.status, r.text).toBe(200)
    expect(r.body).toMatchObject({ imported: 2, duplicates: 1, list: { item_count: 2 } })
    expect(r.body.invalid.map((i: any) => i.line)).toEqual([4, 5, 6])
    const items = await allItems(list.list_id)
    expect(items.find((i) => i.phone_e164 === a)).toMatchObject({
      name: 'Ann',
      timezone: 'America/Chicago',
      variables: { plan: 'gold', seats: '3' },
      dnc: false,
    })
    expect(items.find((i) => i.phone_e164 === b)).toMatchObject({
      name: null,
      timezone: null,
      variables: { company: 'Acme' },
    })

    expectError(
      await t.api.post(`/lists/${list.list_id}/import`, { contacts: 'x' }),
      400,
      'validation_error',
      'contacts',
    )
    expectError(await t.api.post(`/lists/${list.list_id}/import`, { rows: [] }), 400, 'unsupported_field', 'rows')
  })

  it('refuses unreadable files whole, and uploads over 10 MB with 413', async () => {
    verifies('outbound.lists-import-limits')
    const list = (await t.api.post(`/agents/${agent}/lists`, { name: 'Limits' })).body
    expectError(await upload(`/lists/${list.list_id}/import`, 'name,plan\nAnn,gold\n'), 400, 'validation_error', 'file')
    expectError(await upload(`/lists/${list.list_id}/import`, ''), 400, 'validation_error', 'file')
    expectError(await upload(`/lists/${list.list_id}/import`, 'phone,phone\n+1,+2\n'), 400, 'validation_error', 'file')
    expectError(
      await upload(`/lists/${list.list_id}/import`, `phone\n${freshNumber()}\n`, t.key, { mode: 'x' }),
      400,
      'unsupported_field',
      'mode',
    )
    const rows = `phone\n${`${freshNumber()}\n`.repeat(50_001)}`
    expectError(await upload(`/lists/${list.list_id}/import`, rows), 403, 'plan_limit_reached')

    const big = new Uint8Array(11 * 1024 * 1024).fill(49)
    big.set(new TextEncoder().encode('phone\n'))
    expectError(await upload(`/lists/${list.list_id}/import`, big), 413, 'payload_too_large')
    expect((await t.api.get(`/lists/${list.list_id}/items`)).body.data).toEqual([])
  })

  it('pages items with a keyset cursor', async () => {
    verifies('outbound.lists')
    const list = (await t.api.post(`/agents/${agent}/lists`, { name: 'Paging' })).body
    const numbers = Array.from({ length: 5 }, freshNumber)
    expect((await upload(`/lists/${list.list_id}/import`, `phone\n${numbers.join('\n')}\n`)).body.imported).toBe(5)
    const seen: string[] = []
    let cursor: string | null = null
    for (let page = 0; page < 3; page++) {
      const r: ApiResponse = await t.api.get(
        `/lists/${list.list_id}/items?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      )
      expect(r.status, r.text).toBe(200)
      seen.push(...r.body.data.map((i: any) => i.phone_e164))
      cursor = r.body.pagination.next_cursor
      expect(r.body.pagination.has_more).toBe(page < 2)
    }
    expect(seen.sort()).toEqual([...numbers].sort())
    const other = (await t.api.post(`/agents/${agent}/lists`, { name: 'Other' })).body
    const first = await t.api.get(`/lists/${list.list_id}/items?limit=2`)
    expectError(
      await t.api.get(
        `/lists/${other.list_id}/items?limit=2&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`,
      ),
      400,
      'invalid_cursor',
    )
    expectError(await t.api.get(`/lists/${list.list_id}/items?limit=1001`), 400, 'invalid_limit')
  })

  it("keeps tenants apart: another account's agent and lists are 404", async () => {
    verifies('outbound.lists', 'tenancy.isolation')
    const list = (await t.api.post(`/agents/${agent}/lists`, { name: 'Private' })).body
    await upload(`/lists/${list.list_id}/import`, `phone\n${freshNumber()}\n`)
    expectError(await other.api.get(`/agents/${agent}/lists`), 404, 'agent_not_found')
    expectError(await other.api.post(`/agents/${agent}/lists`, { name: 'x' }), 404, 'agent_not_found')
    expectError(await t.api.post(`/agents/${otherAgent}/lists`, { name: 'x' }), 404, 'agent_not_found')
    expectError(await other.api.get(`/lists/${list.list_id}/items`), 404, 'not_found')
    expectError(
      await other.api.post(`/lists/${list.list_id}/import`, { contacts: [{ phone: freshNumber() }] }),
      404,
      'not_found',
    )
    expectError(await upload(`/lists/${list.list_id}/import`, `phone\n${freshNumber()}\n`, other.key), 404, 'not_found')
    expect((await t.api.get(`/lists/${list.list_id}/items`)).body.data).toHaveLength(1)
  })

  it('reads need outbound:read and writes outbound:write', async () => {
    verifies('outbound.lists')
    const list = (await t.api.post(`/agents/${agent}/lists`, { name: 'Scopes' })).body
    const reader = await master.post(`/users/${t.userId}/credentials`, { name: 'reader', scopes: ['outbound:read'] })
    const r = createApi(base, reader.body.secret)
    expect((await r.get(`/agents/${agent}/lists`)).status).toBe(200)
    expect((await r.get(`/lists/${list.list_id}/items`)).status).toBe(200)
    expectError(await r.post(`/agents/${agent}/lists`, { name: 'x' }), 403, 'insufficient_scope')
    expectError(await r.post(`/lists/${list.list_id}/import`, { contacts: [] }), 403, 'insufficient_scope')
    expectError(await upload(`/lists/${list.list_id}/import`, 'phone\n', reader.body.secret), 403, 'insufficient_scope')
    const agentsOnly = await master.post(`/users/${t.userId}/credentials`, { name: 'agents', scopes: ['agents:read'] })
    const a = createApi(base, agentsOnly.body.secret)
    expectError(await a.get(`/agents/${agent}/lists`), 403, 'insufficient_scope')
    expectError(await a.get(`/lists/${list.list_id}/items`), 403, 'insufficient_scope')
  })
})
