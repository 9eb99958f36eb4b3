// Tenant isolation: a key of account A tries every account-scoped route of the access issue with account
// B's ids and gets 403 or 404, never B's data.
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi } from '../helpers/api'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const base = inject('base')
const master = createApi(base, inject('masterKey'))
let a: Tenant
let b: Tenant

beforeAll(async () => {
  a = await createTenant(master)
  b = await createTenant(master)
  await b.api.patch(`/accounts/${b.accountId}`, { external_ids: { secret_marker: 'B-ONLY-DATA' } })
})

describe('tenant isolation', () => {
  it("A's key never reads or writes B's account, keys or users", async () => {
    verifies('tenancy.isolation')
    const attempts: [string, string, unknown?][] = [
      ['GET', `/accounts/${b.accountId}`],
      ['GET', `/accounts/${b.userId}`],
      ['PATCH', `/accounts/${b.accountId}`, { default_redaction: true }],
      ['GET', `/accounts/${b.accountId}/limits`],
      ['GET', `/accounts/${b.accountId}/balance`],
      ['GET', `/accounts/${b.accountId}/usage?from=2026-01-01T00:00:00Z&to=2027-01-01T00:00:00Z`],
      ['GET', `/accounts?account_id=${b.accountId}`],
      ['GET', '/accounts', undefined],
      ['GET', `/users/${b.userId}/credentials`],
      ['POST', `/users/${b.userId}/credentials`, { scopes: ['accounts:read'] }],
      ['GET', `/credentials?user_id=${b.userId}`],
      ['POST', `/credentials/${b.keyId}/rotate`],
      ['DELETE', `/credentials/${b.keyId}`],
      ['GET', `/users/${b.userId}`],
      ['PATCH', `/users/${b.userId}`, { status: 'suspended' }],
    ]
    for (const [method, path, body] of attempts) {
      const headers = path === '/accounts' ? { 'x-svc-account': b.accountId } : undefined
      const r = await a.api.request(method, path, { body, headers })
      expect([403, 404], `${method} ${path} → ${r.status}`).toContain(r.status)
      expect(r.text, `${method} ${path}`).not.toContain('B-ONLY-DATA')
      expect(r.text).not.toContain(b.email)
    }
    // B is untouched and its key still works.
    const own = await b.api.get(`/accounts/${b.accountId}`)
    expect(own.body).toMatchObject({ default_redaction: false, external_ids: { secret_marker: 'B-ONLY-DATA' } })
    expect(own.body.status).toBe('active')
  })
})
