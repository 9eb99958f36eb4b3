// Idempotency-Key answers that carry a secret, on a server of its own: the stored row is read straight
// from the database (PGlite allows one process, so the server is stopped for that) and must not hold the
// secret in any readable form; after a restart the same credential still gets the same secret replayed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { idempotencyKeys } from '~/db/schema'
import { createApi, type Api, type ApiResponse } from '../helpers/api'
import { withDatabase } from '../helpers/db'
import { startServer, type TestServer } from '../helpers/server'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

let server: TestServer
let master: Api
let t: Tenant

beforeAll(async () => {
  server = await startServer()
  master = createApi(server.base, server.masterKey)
  t = await createTenant(master)
}, 240_000)
afterAll(async () => {
  await server?.stop('SIGKILL')
})

const newKey = (tag: string) => `sec-${tag}-${Date.now()}-${Math.random().toString(36).slice(2)}`
const withKey = (k: string) => ({ headers: { 'idempotency-key': k } })
const withoutMeta = (r: ApiResponse) => {
  const { meta: _meta, ...rest } = r.body
  return rest
}

describe('Idempotency-Key answers that carry a secret', () => {
  it('are stored encrypted (no plaintext secret in the row) and replayed to the same credential only', {
    timeout: 240_000,
  }, async () => {
    verifies('idempotency.secret-answers', 'idempotency.header')
    const keys = {
      create: newKey('create'),
      rotate: newKey('rotate'),
      endpoint: newKey('endpoint'),
      rotateSecret: newKey('rotsec'),
      link: newKey('link'),
    }
    const hook = { url: 'http://127.0.0.1:9/hook', events: ['conversation.started'] }
    const sends: Record<keyof typeof keys, () => Promise<ApiResponse>> = {
      create: () => master.post(`/users/${t.userId}/credentials`, { scopes: ['agents:read'] }, withKey(keys.create)),
      rotate: () => master.post(`/credentials/${first.create.body.key_id}/rotate`, undefined, withKey(keys.rotate)),
      endpoint: () => t.api.post('/webhooks/endpoints', hook, withKey(keys.endpoint)),
      rotateSecret: () =>
        t.api.post(
          `/webhooks/endpoints/${first.endpoint.body.endpoint_id}/rotate-secret`,
          undefined,
          withKey(keys.rotateSecret),
        ),
      link: () => master.post(`/users/${t.userId}/login-links`, undefined, withKey(keys.link)),
    }
    const first = {} as Record<keyof typeof keys, ApiResponse>
    for (const name of Object.keys(keys) as (keyof typeof keys)[]) {
      first[name] = await sends[name]()
      expect(first[name].status, name).toBeLessThan(300)
    }
    const secrets = [
      first.create.body.secret,
      first.rotate.body.secret,
      first.endpoint.body.secret,
      first.rotateSecret.body.secret,
      first.link.body.token,
    ] as string[]
    for (const s of secrets) expect(s).toMatch(/^(svc_sk_live_|whsec_|svc_lnk_)/)

    await server.stop('SIGTERM')
    const rows = await withDatabase(server.dataDir, (db) => db.db.select().from(idempotencyKeys))
    const mine = rows.filter((r) => Object.values(keys).some((k) => r.key === k || r.key.startsWith(k + ' ')))
    expect(mine).toHaveLength(5)
    for (const row of mine) {
      expect(row.state).toBe('done')
      const stored = JSON.stringify(row)
      for (const s of secrets) {
        expect(stored).not.toContain(s)
        // Not even the random part (a base64 or hex re-encoding would still leak it).
        expect(stored).not.toContain(s.replace(/^(svc_sk_live_|whsec_|svc_lnk_)/, '').slice(0, 16))
      }
      expect(stored).not.toMatch(/svc_sk_live_|whsec_|svc_lnk_/)
    }

    server = await startServer({ dataDir: server.dataDir, masterKey: server.masterKey })
    master = createApi(server.base, server.masterKey)
    t = { ...t, api: createApi(server.base, t.key) }
    for (const name of Object.keys(keys) as (keyof typeof keys)[]) {
      const again = await sends[name]()
      expect(again.status, name).toBe(first[name].status)
      expect(again.headers.get('idempotent-replayed'), name).toBe('true')
      expect(withoutMeta(again), name).toEqual(withoutMeta(first[name]))
    }

    // Another credential using the same Idempotency-Key on the same path runs the request itself.
    const theirs = await t.api.post(`/users/${t.userId}/credentials`, { scopes: ['agents:read'] }, withKey(keys.create))
    expect(theirs.status).toBe(201)
    expect(theirs.headers.get('idempotent-replayed')).toBeNull()
    expect(theirs.body.secret).not.toBe(first.create.body.secret)
  })
})
