// The operator surface (/v1/admin/*, issue 18) is the master key's alone: every operation the OpenAPI
// document tags Operator answers 401 without a key and 403 forbidden to a tenant's key holding every
// personal scope, before it reads or writes anything; and the action log records a write with its
// request id. Driven by the document, so a route added later is checked too.
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, expectError } from '../helpers/api'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

describe('operator surface refusals (shared server)', () => {
  const base = inject('base')
  const master = createApi(base, inject('masterKey'))
  const anonymous = createApi(base)
  let t: Tenant
  let operations: { method: string; path: string }[] = []

  beforeAll(async () => {
    t = await createTenant(master)
    const doc = (await master.get('/openapi.json')).body
    for (const [path, item] of Object.entries<any>(doc.paths))
      for (const [method, op] of Object.entries<any>(item))
        if (op?.tags?.includes('Operator')) operations.push({ method, path })
    operations = operations.sort((a, b) => `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`))
  })

  it('answers 401 without a key and 403 forbidden to a tenant key on every Operator operation', async () => {
    verifies('admin.master-only')
    expect(operations.map((o) => o.path)).toContain('/admin/actions')
    for (const { method, path } of operations) {
      // Path parameters get well-formed ids of the tenant itself: a key that reaches them still may not.
      const concrete = path
        .replace('{usr}', t.userId)
        .replace('{agt}', 'agt_1')
        .replace('{key}', t.keyId)
        .replace(/\{[a-z_]+\}/g, 'x_1')
      const body = method === 'get' || method === 'delete' ? undefined : {}
      const send = (api: typeof master) => (api as any)[method](concrete, body)
      const none = await send(anonymous)
      expect(none.status, `${method} ${path} without a key`).toBe(401)
      const tenant = await send(t.api)
      expectError(tenant, 403, 'forbidden')
    }
    // The tenant's own key still works elsewhere: the refusals were the operator surface's.
    expect((await t.api.get(`/accounts/${t.accountId}`)).status).toBe(200)
  })

  it('lists operator writes newest first with their request id, filtered by action and target', async () => {
    verifies('admin.action-log')
    const r = await master.get('/admin/actions?limit=5')
    expect(r.status).toBe(200)
    expect(Array.isArray(r.body.data)).toBe(true)
    for (const a of r.body.data)
      expect(a).toMatchObject({ action_id: expect.stringMatching(/^act_\d+$/), request_id: expect.any(String) })
    expectError(await master.get('/admin/actions?bogus=1'), 400, 'unsupported_filter')
    expectError(await master.get('/admin/actions?limit=0'), 400, 'invalid_limit')
  })
})
