// Black-box tests of GET /audit over HTTP. Other files share the server, so every check finds its own
// rows by request id, by a fresh account, or by a narrow window, never by counting the whole log.
// Audit rows are written in batches after the response (~250 ms), hence the polling.
import { describe, expect, inject, it } from 'vitest'
import { createApi, err, expectError, uniqueEmail, type ApiResponse } from '../helpers/api'
import { verifies } from '../requirements'
import { sleep } from '../helpers/wait'
import { parseCsv } from '../helpers/csv'

const base = inject('base')
const origin = inject('origin')
const api = createApi(base, inject('masterKey'))
const anon = createApi(base)

const ROW_KEYS = [
  'account_ids',
  'created_at',
  'credential_id',
  'credential_type',
  'cross_account',
  'duration_ms',
  'error_code',
  'ip',
  'method',
  'path',
  'request_id',
  'status_code',
  'user_agent',
]
const CSV_HEADER =
  'created_at,request_id,credential_type,credential_id,account_ids,cross_account,method,path,status_code,error_code,ip,user_agent,duration_ms'

let seq = 0
const rid = (tag: string) => `aud-${tag}-${process.pid}-${Date.now().toString(36)}-${++seq}`
const iso = (ms: number) => new Date(ms).toISOString()
const q = (params: Record<string, string | number | undefined>) =>
  '?' +
  Object.entries(params)
    .filter(([, x]) => x !== undefined)
    .map(([k, x]) => `${k}=${encodeURIComponent(String(x))}`)
    .join('&')

/** Every row of a json query, walking the cursor to the end. */
async function allRows(params: Record<string, string | number | undefined>): Promise<any[]> {
  const rows: any[] = []
  let cursor: string | undefined
  for (let i = 0; i < 500; i++) {
    const r = await api.get('/audit' + q({ limit: 100, ...params, cursor }))
    expect(r.status, r.text).toBe(200)
    rows.push(...r.body.data)
    cursor = r.body.pagination.next_cursor ?? undefined
    if (!cursor) return rows
  }
  throw new Error('too many pages')
}

/** Polls until the rows with these request ids are written (or the deadline passes), then answers them. */
async function waitForRows(
  ids: string[],
  params: Record<string, string | number | undefined>,
  timeoutMs = 8000,
): Promise<Map<string, any>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = new Map<string, any>()
    for (const row of await allRows(params)) if (ids.includes(row.request_id)) found.set(row.request_id, row)
    if (found.size === ids.length || Date.now() > deadline) return found
    await sleep(150)
  }
}

async function newAccount(): Promise<{ user: string; account: string }> {
  const r = await api.post('/users', { email: uniqueEmail('audit') })
  expect(r.status).toBe(201)
  return { user: r.body.user_id, account: r.body.account_id }
}

describe('audit rows', () => {
  it('one row per metered request: method, path without the query, status, error code, credential, ip, agent, duration', async () => {
    verifies('audit.rows', 'auth.master-key')
    const t0 = Date.now() - 1000
    const okId = rid('ok')
    const missId = rid('miss')
    const aliasId = rid('alias')
    const headers = { 'x-forwarded-for': '198.51.100.23', 'user-agent': 'audit-test/1.0' }
    const ok = await api.get('/users?limit=1&status=active', { headers: { ...headers, 'x-request-id': okId } })
    expect(ok.status).toBe(200)
    const miss = await api.get('/users/usr_999999999', { headers: { ...headers, 'x-request-id': missId } })
    expect(miss.status).toBe(404)
    const alias = await createApi(`${origin}/api/v1`, inject('masterKey')).get('/users?limit=1', {
      headers: { 'x-request-id': aliasId },
    })
    expect(alias.status).toBe(200)

    const rows = await waitForRows([okId, missId, aliasId], { from: iso(t0), credential_id: 'master' })
    const okRow = rows.get(okId)
    expect(okRow).toBeDefined()
    expect(Object.keys(okRow).sort()).toEqual(ROW_KEYS)
    expect(okRow).toMatchObject({
      request_id: okId,
      credential_type: 'master',
      credential_id: 'master',
      account_ids: [],
      cross_account: true,
      method: 'GET',
      path: '/v1/users',
      status_code: 200,
      error_code: null,
      ip: '198.51.100.23',
      user_agent: 'audit-test/1.0',
    })
    expect(okRow.duration_ms).toBeGreaterThanOrEqual(0)
    expect(Number.isInteger(okRow.duration_ms)).toBe(true)
    expect(okRow.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(Date.parse(okRow.created_at)).toBeGreaterThanOrEqual(t0)

    expect(rows.get(missId)).toMatchObject({
      path: '/v1/users/usr_999999999',
      status_code: 404,
      error_code: 'not_found',
      cross_account: true,
    })
    // The path as the client sent it, also under the /api/v1 alias.
    expect(rows.get(aliasId)).toMatchObject({ path: '/api/v1/users', status_code: 200 })
  })

  it('public routes (/health, /openapi.json, /docs) are not audited', async () => {
    verifies('audit.rows', 'health.public')
    const t0 = Date.now() - 1000
    const publicIds = [rid('health'), rid('openapi'), rid('docs')]
    expect((await anon.get('/health', { headers: { 'x-request-id': publicIds[0] } })).status).toBe(200)
    expect((await anon.get('/openapi.json', { headers: { 'x-request-id': publicIds[1] } })).status).toBe(200)
    expect((await anon.get('/docs', { headers: { 'x-request-id': publicIds[2] } })).status).toBe(200)
    // Rows are flushed in order: once a later metered request shows up, the public ones would have too.
    const marker = rid('marker')
    await api.get('/users?limit=1', { headers: { 'x-request-id': marker } })
    expect((await waitForRows([marker], { from: iso(t0) })).has(marker)).toBe(true)
    const ids = new Set((await allRows({ from: iso(t0) })).map((r) => r.request_id))
    for (const id of publicIds) expect(ids.has(id), id).toBe(false)
  })

  it('a failed authentication is audited with a null credential', async () => {
    verifies('audit.rows', 'auth.invalid_credentials')
    const t0 = Date.now() - 1000
    const id = rid('badkey')
    // Its own client IP, so the per-IP failure limit other files exercise cannot turn this into a 429.
    const ip = `192.0.2.${(process.pid % 200) + 20}`
    const r = await anon.get('/users?limit=1', {
      key: 'svc_sk_live_' + 'n'.repeat(40),
      headers: { 'x-request-id': id, 'x-forwarded-for': ip },
    })
    expect(r.status).toBe(401)
    const rows = await waitForRows([id], { from: iso(t0), status_code: 401 })
    expect(rows.get(id)).toMatchObject({
      credential_type: null,
      credential_id: null,
      account_ids: [],
      cross_account: false,
      method: 'GET',
      path: '/v1/users',
      status_code: 401,
      error_code: 'invalid_credentials',
      ip,
    })
  })
})

describe('GET /audit filters', () => {
  it('credential_id and status_code narrow the rows', async () => {
    verifies('audit.rows')
    const t0 = Date.now() - 1000
    const missId = rid('f404')
    await api.get('/users/usr_999999998', { headers: { 'x-request-id': missId } })
    const found = await waitForRows([missId], { from: iso(t0), status_code: 404 })
    expect(found.has(missId)).toBe(true)
    const notFound = await allRows({ from: iso(t0), status_code: 404 })
    expect(notFound.every((r) => r.status_code === 404)).toBe(true)
    expect((await allRows({ from: iso(t0), status_code: 200 })).some((r) => r.request_id === missId)).toBe(false)
    const master = await allRows({ from: iso(t0), credential_id: 'master' })
    expect(master.length).toBeGreaterThan(0)
    expect(master.every((r) => r.credential_id === 'master' && r.credential_type === 'master')).toBe(true)
    expect(await allRows({ from: iso(t0), credential_id: 'key_987654321' })).toEqual([])
  })

  it('from and to bound the window [from, to) and come back in meta with applied_default_range; the default window is 24 hours to now', async () => {
    verifies('audit.rows', 'conventions.timestamps', 'contract.smaller-points')
    const t0 = Date.now() - 1000
    const id = rid('window')
    await api.get('/users?limit=1', { headers: { 'x-request-id': id } })
    const row = (await waitForRows([id], { from: iso(t0) })).get(id)
    expect(row).toBeDefined()
    const at = Date.parse(row.created_at)
    expect((await allRows({ from: iso(at), to: iso(at + 1) })).map((r) => r.request_id)).toContain(id)
    expect((await allRows({ from: iso(at - 60_000), to: iso(at) })).map((r) => r.request_id)).not.toContain(id)
    expect((await allRows({ from: iso(at + 1), to: iso(at + 60_000) })).map((r) => r.request_id)).not.toContain(id)

    const explicit = await api.get(
      '/audit' + q({ from: '2026-01-01T08:00:00Z', to: '2026-01-01T12:00:00.5Z', limit: 1 }),
    )
    expect(explicit.status).toBe(200)
    expect(explicit.body.meta).toMatchObject({
      from: '2026-01-01T08:00:00.000Z',
      to: '2026-01-01T12:00:00.500Z',
      applied_default_range: false,
      environment: 'production',
    })
    // Timestamp input ends in Z: an offset is refused, not converted.
    const offset = await api.get('/audit' + q({ from: '2026-01-01T10:00:00+02:00', limit: 1 }))
    expectError(offset, 400, 'invalid_date', 'from')

    const before = Date.now()
    const dflt = await api.get('/audit?limit=1')
    expect(Date.parse(dflt.body.meta.to)).toBeGreaterThanOrEqual(before - 5)
    expect(Date.parse(dflt.body.meta.to)).toBeLessThanOrEqual(Date.now() + 5)
    expect(Date.parse(dflt.body.meta.to) - Date.parse(dflt.body.meta.from)).toBe(24 * 3600_000)
    expect(dflt.body.meta.applied_default_range).toBe(true)
    // The defaulted window travels in the cursor: the next page answers the same meta.
    if (dflt.body.pagination.next_cursor) {
      const next = await api.get('/audit' + q({ limit: 1, cursor: dflt.body.pagination.next_cursor }))
      expect(next.body.meta).toMatchObject({
        from: dflt.body.meta.from,
        to: dflt.body.meta.to,
        applied_default_range: true,
      })
    }
    const onlyTo = await api.get('/audit' + q({ to: '2026-03-02T00:00:00Z', limit: 1 }))
    expect(onlyTo.body.meta).toMatchObject({
      from: '2026-03-01T00:00:00.000Z',
      to: '2026-03-02T00:00:00.000Z',
      applied_default_range: false,
    })
  })

  it('account_id keeps the rows that touched the account; usr_<n> names the same account', async () => {
    verifies('audit.rows')
    const { user, account } = await newAccount()
    const t0 = Date.now() - 1000
    const id = rid('acct')
    expect(
      (await api.get('/audit' + q({ account_id: user, limit: 1 }), { headers: { 'x-request-id': id } })).status,
    ).toBe(200)
    const rows = await waitForRows([id], { from: iso(t0), account_id: account })
    expect(rows.get(id)).toMatchObject({ account_ids: [account], cross_account: true, path: '/v1/audit' })
    const viaUser = await allRows({ from: iso(t0), account_id: user })
    expect(viaUser.length).toBeGreaterThan(0)
    expect(viaUser.every((r) => r.account_ids.includes(account))).toBe(true)
    // An account that does not exist is refused by account resolution before the query.
    expect(err(await api.get('/audit?account_id=acc_987654321')).code).toBe('forbidden_account')
  })
})

describe('GET /audit errors', () => {
  const code = async (path: string) => {
    const r = await api.get(path)
    expect(r.status, path).toBe(400)
    return err(r)
  }

  it('answers invalid_date, invalid_date_range, invalid_id, validation_error, unsupported_filter, invalid_limit, invalid_cursor', async () => {
    verifies('audit.rows', 'errors.validation_error', 'errors.unsupported_filter', 'conventions.ids')
    expect(await code('/audit?from=2026-01-01')).toMatchObject({ code: 'invalid_date', field: 'from' })
    expect(await code('/audit?to=yesterday')).toMatchObject({ code: 'invalid_date', field: 'to' })
    expect(await code('/audit?from=2026-02-30T00:00:00Z')).toMatchObject({ code: 'invalid_date', field: 'from' })
    expect(await code('/audit' + q({ from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' }))).toMatchObject({
      code: 'invalid_date_range',
    })
    expect((await code('/audit' + q({ from: '2026-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }))).code).toBe(
      'invalid_date_range',
    )
    expect((await code('/audit' + q({ from: iso(Date.now() + 3600_000) }))).code).toBe('invalid_date_range')
    for (const bad of ['usr_1', 'key_', 'key_x', 'MASTER', ''])
      expect(await code('/audit' + q({ credential_id: bad }))).toMatchObject({
        code: 'invalid_id',
        field: 'credential_id',
      })
    expect(await code('/audit?account_id=nope')).toMatchObject({ code: 'invalid_id', field: 'account_id' })
    for (const bad of ['99', '600', 'abc', '20x', '200.0', '-200'])
      expect(await code('/audit' + q({ status_code: bad }))).toMatchObject({
        code: 'validation_error',
        field: 'status_code',
      })
    expect(await code('/audit?format=xml')).toMatchObject({ code: 'unsupported_filter', field: 'format' })
    expect(await code('/audit?request_id=x')).toMatchObject({ code: 'unsupported_filter', field: 'request_id' })
    expect(await code('/audit?format=csv&cursor=abc')).toMatchObject({ code: 'unsupported_filter', field: 'cursor' })
    expect(await code('/audit?format=csv&limit=10')).toMatchObject({ code: 'unsupported_filter', field: 'limit' })
    for (const bad of ['0', '101', 'ten'])
      expect(await code(`/audit?limit=${bad}`)).toMatchObject({ code: 'invalid_limit', field: 'limit' })
    expect(await code('/audit?cursor=garbage')).toMatchObject({ code: 'invalid_cursor', field: 'cursor' })
    expect(await code('/audit?status_code=200&status_code=404')).toMatchObject({
      code: 'validation_error',
      field: 'status_code',
    })
  })
})

describe('GET /audit json paging', () => {
  it('walks newest first on (created_at, id) to has_more false; the cursor is bound to the filters', async () => {
    verifies('audit.rows', 'envelope.list', 'cursor.signed-and-bound')
    const { account } = await newAccount()
    const t0 = Date.now() - 1000
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      const id = rid(`page${i}`)
      ids.push(id)
      expect(
        (await api.get('/audit' + q({ account_id: account, limit: 1 }), { headers: { 'x-request-id': id } })).status,
      ).toBe(200)
    }
    // Rows of the requests below (which also name the account) start after t1.
    const t1 = Date.now() + 1
    await sleep(5)
    expect((await waitForRows(ids, { from: iso(t0), to: iso(t1), account_id: account })).size).toBe(5)

    const params = { from: iso(t0), to: iso(t1), account_id: account, limit: 2 }
    const seen: any[] = []
    let cursor: string | undefined
    let pages = 0
    let firstCursor: string | undefined
    for (;;) {
      const r = await api.get('/audit' + q({ ...params, cursor }))
      expect(r.status).toBe(200)
      expect(Object.keys(r.body).sort()).toEqual(['data', 'meta', 'pagination'])
      expect(r.body.meta).toMatchObject({ from: iso(t0), to: iso(t1) })
      expect(r.body.pagination.limit).toBe(2)
      seen.push(...r.body.data)
      pages++
      if (!r.body.pagination.has_more) {
        expect(r.body.pagination.next_cursor).toBeNull()
        break
      }
      cursor = r.body.pagination.next_cursor
      firstCursor ??= cursor
    }
    expect(pages).toBe(3)
    // Newest first: the requests were sequential, so their rows come back in reverse order.
    expect(seen.map((r) => r.request_id)).toEqual([...ids].reverse())
    const times = seen.map((r) => Date.parse(r.created_at))
    expect(times).toEqual([...times].sort((a, b) => b - a))

    expect(err(await api.get('/audit' + q({ ...params, limit: 3, cursor: firstCursor }))).code).toBe('invalid_cursor')
    expect(err(await api.get('/audit' + q({ ...params, status_code: 200, cursor: firstCursor }))).code).toBe(
      'invalid_cursor',
    )
  })

  it('with the default window, later pages keep the window of the first page', async () => {
    verifies('audit.rows')
    const { account } = await newAccount()
    for (let i = 0; i < 3; i++) await api.get('/audit' + q({ account_id: account, limit: 1 }))
    await sleep(600)
    const first = await api.get('/audit' + q({ account_id: account, limit: 1 }))
    expect(first.body.pagination.has_more).toBe(true)
    await sleep(20)
    const second = await api.get(
      '/audit' + q({ account_id: account, limit: 1, cursor: first.body.pagination.next_cursor }),
    )
    expect(second.status).toBe(200)
    expect(second.body.meta.from).toBe(first.body.meta.from)
    expect(second.body.meta.to).toBe(first.body.meta.to)
    expect(Date.parse(second.body.data[0].created_at)).toBeLessThanOrEqual(Date.parse(first.body.data[0].created_at))
  })
})

describe('GET /audit?format=csv', () => {
  async function csv(
    params: Record<string, string | number | undefined>,
  ): Promise<{ r: ApiResponse; rows: string[][] }> {
    const r = await api.get('/audit' + q({ format: 'csv', ...params }))
    expect(r.status, r.text.slice(0, 300)).toBe(200)
    return { r, rows: parseCsv(r.text) }
  }

  it('streams an attachment with the exact header, RFC 4180 quoting and one record per row', async () => {
    verifies('audit.csv')
    const { account } = await newAccount()
    const t0 = Date.now() - 1000
    const id = rid('csv')
    const agent = `probe "quoted", with comma/${id}`
    expect(
      (
        await api.get('/audit' + q({ account_id: account, limit: 1 }), {
          headers: { 'x-request-id': id, 'user-agent': agent, 'x-forwarded-for': '198.51.100.99' },
        })
      ).status,
    ).toBe(200)
    const failId = rid('csvfail')
    const failIp = `192.0.2.${(process.pid % 200) + 20}`
    expect(
      (
        await anon.get('/users/usr_1', {
          key: 'svc_sk_live_nope',
          headers: { 'x-request-id': failId, 'x-forwarded-for': failIp },
        })
      ).status,
    ).toBe(401)
    await waitForRows([id, failId], { from: iso(t0) })

    const { r, rows } = await csv({ from: iso(t0) })
    expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    const days = [t0 + 1000, Date.now()].map((t) => `attachment; filename="svc-audit-${iso(t).slice(0, 10)}.csv"`)
    expect(days).toContain(r.headers.get('content-disposition'))
    expect(r.headers.get('x-request-id')).toBeTruthy()
    expect(r.text.split('\r\n')[0]).toBe(CSV_HEADER)
    expect(r.text.endsWith('\r\n')).toBe(true)
    const [header, ...records] = rows
    expect(header.join(',')).toBe(CSV_HEADER)
    for (const rec of records) expect(rec).toHaveLength(13)
    // The raw text carries the agent quoted with its quotes doubled.
    expect(r.text).toContain(`"probe ""quoted"", with comma/${id}"`)

    const col = (name: string) => header.indexOf(name)
    const mine = records.find((rec) => rec[col('request_id')] === id)!
    expect(mine).toBeDefined()
    expect(mine[col('user_agent')]).toBe(agent)
    expect(mine[col('credential_type')]).toBe('master')
    expect(mine[col('credential_id')]).toBe('master')
    expect(mine[col('account_ids')]).toBe(account)
    expect(mine[col('cross_account')]).toBe('true')
    expect(mine[col('method')]).toBe('GET')
    expect(mine[col('path')]).toBe('/v1/audit')
    expect(mine[col('status_code')]).toBe('200')
    expect(mine[col('error_code')]).toBe('')
    expect(mine[col('ip')]).toBe('198.51.100.99')
    expect(Number(mine[col('duration_ms')])).toBeGreaterThanOrEqual(0)
    expect(mine[col('created_at')]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)

    const fail = records.find((rec) => rec[col('request_id')] === failId)!
    expect(fail).toBeDefined()
    expect(fail[col('credential_type')]).toBe('')
    expect(fail[col('credential_id')]).toBe('')
    expect(fail[col('cross_account')]).toBe('false')
    expect(fail[col('error_code')]).toBe('invalid_credentials')

    const times = records.map((rec) => Date.parse(rec[col('created_at')]))
    expect(times).toEqual([...times].sort((a, b) => b - a))
  })

  it('applies the filters and continues past one database batch without gaps or repeats', async () => {
    verifies('audit.csv')
    const t0 = Date.now() - 1000
    const tag = rid('bulk')
    const n = 1100
    // Cheap metered requests (400 before any query); all carry this test's user agent.
    for (let i = 0; i < n; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, n - i) }, (_, j) =>
          api.get('/users?limit=abc', { headers: { 'user-agent': tag, 'x-request-id': `${tag}-${i + j}` } }),
        ),
      )
    }
    const t1 = Date.now() + 1
    await sleep(700)
    const { rows } = await csv({ from: iso(t0), to: iso(t1), status_code: 400, credential_id: 'master' })
    const [header, ...records] = rows
    const col = (name: string) => header.indexOf(name)
    expect(records.every((rec) => rec[col('status_code')] === '400' && rec[col('credential_id')] === 'master')).toBe(
      true,
    )
    const mine = records.filter((rec) => rec[col('user_agent')] === tag)
    expect(mine).toHaveLength(n)
    expect(new Set(mine.map((rec) => rec[col('request_id')])).size).toBe(n)
    expect(mine.every((rec) => rec[col('error_code')] === 'invalid_limit')).toBe(true)
  })

  it('an empty window is the header alone', async () => {
    verifies('audit.csv')
    const { r, rows } = await csv({ from: '2001-01-01T00:00:00Z', to: '2001-01-02T00:00:00Z' })
    expect(r.text).toBe(CSV_HEADER + '\r\n')
    expect(rows).toHaveLength(1)
  })
})
