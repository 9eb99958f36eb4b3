// Time-dependent key rules on a server of its own: expiry (401 expired_token), the end of a rotation's
// grace (the sweep revokes the predecessor), and per-class rate limits with a low read limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inArray } from 'drizzle-orm'
import { apiKeys } from '~/db/schema'
import { createApi, err } from '../helpers/api'
import { withDatabase } from '../helpers/db'
import { startServer, type TestServer } from '../helpers/server'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

let server: TestServer
let t: Tenant
const env = { SVC_RATE_LIMITS: 'read=5,write=1000' }

beforeAll(async () => {
  server = await startServer({ env })
  t = await createTenant(createApi(server.base, server.masterKey), { scopes: ['accounts:read', 'credentials:manage'] })
})
afterAll(async () => {
  await server?.stop('SIGKILL')
})

describe('rate classes', () => {
  it('past the class limit a credential gets 429 rate_limited with Retry-After; other credentials are unaffected', async () => {
    verifies('rate.limited', 'rate.headers')
    const statuses: number[] = []
    let last: Awaited<ReturnType<typeof t.api.get>> | undefined
    for (let i = 0; i < 6; i++) {
      last = await t.api.get(`/accounts/${t.accountId}`)
      statuses.push(last.status)
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
    expect(err(last!).code).toBe('rate_limited')
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(last!.headers.get('x-ratelimit-limit')).toBe('5')
    expect(last!.headers.get('x-ratelimit-remaining')).toBe('0')
    expect(last!.headers.get('ratelimit-policy')).toBe('"read";q=5;w=60')
    expect(last!.headers.get('ratelimit')).toMatch(/^"read";r=0;t=\d+$/)
    // Writes are another class, and another key has its own budget.
    const k2 = await createApi(server.base, server.masterKey).post(`/users/${t.userId}/credentials`, {
      scopes: ['accounts:read'],
    })
    expect((await createApi(server.base, k2.body.secret).get(`/accounts/${t.accountId}`)).status).toBe(200)
  })
})

describe('expiry and the end of grace', () => {
  it('a key past expiry is 401 expired_token; a rotated predecessor is revoked by the sweep once grace ends', async () => {
    verifies('auth.expired_token', 'credentials.rotate', 'jobs.durable')
    const admin = createApi(server.base, server.masterKey)
    const expiring = await admin.post(`/users/${t.userId}/credentials`, {
      scopes: ['accounts:read'],
      expires_in_days: 1,
    })
    const old = await admin.post(`/users/${t.userId}/credentials`, { scopes: ['accounts:read'] })
    const successor = await admin.post(`/credentials/${old.body.key_id}/rotate`)
    expect(successor.status).toBe(201)
    await server.stop('SIGTERM')
    // Time passes: both the 1-day key and the predecessor's grace end.
    await withDatabase(server.dataDir, (db) =>
      db.db
        .update(apiKeys)
        .set({ expiresAt: new Date(Date.now() - 60_000) })
        .where(inArray(apiKeys.id, [expiring.body.key_id, old.body.key_id])),
    )
    server = await startServer({ dataDir: server.dataDir, masterKey: server.masterKey, env })
    const expired = await createApi(server.base, expiring.body.secret).get(`/accounts/${t.accountId}`)
    expect(expired.status).toBe(401)
    expect(err(expired).code).toBe('expired_token')
    // The grace sweep also runs when a process starts: the predecessor turns revoked.
    // Each probe is a failed authentication: give each its own client IP so that the per-IP failure
    // limit (20 a minute) does not answer instead.
    let code = ''
    for (let i = 0; i < 40 && code !== 'invalid_credentials'; i++) {
      code = err(
        await createApi(server.base, old.body.secret).get(`/accounts/${t.accountId}`, {
          headers: { 'x-forwarded-for': `192.0.2.${i + 1}` },
        }),
      ).code
      if (code !== 'invalid_credentials') await new Promise((r) => setTimeout(r, 250))
    }
    expect(code).toBe('invalid_credentials')
    expect((await createApi(server.base, successor.body.secret).get(`/accounts/${t.accountId}`)).status).toBe(200)
    const listed = (await createApi(server.base, server.masterKey).get(`/users/${t.userId}/credentials?limit=100`)).body
      .data
    expect(listed.find((k: any) => k.key_id === old.body.key_id).status).toBe('revoked')
    expect(listed.find((k: any) => k.key_id === expiring.body.key_id).status).toBe('active')
  }, 120_000)
})
