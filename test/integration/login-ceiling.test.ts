// Over HTTP against a server of its own, with rows the API cannot make yet written straight into its
// database (on PGlite the server is stopped meanwhile: one process per data directory):
// - a login link carrying a narrow ceiling, as a partner key will issue once partner members exist, and
//   what the session it opens may do;
// - a password stored with the old scrypt parameters, which must still log in and be upgraded.
import { randomBytes, scryptSync } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { users } from '~/db/schema'
import { createLoginLink } from '~/domain/sessions/sessions'
import { createApi, err, uniqueEmail, type Api } from '../helpers/api'
import { withDatabase } from '../helpers/db'
import { startServer, type TestServer } from '../helpers/server'
import { verifies } from '../requirements'

let server: TestServer
let master: Api
let dash: Api
const password = 'correct horse battery staple'
let user: { id: string; email: string }
let link: string
let wideKeyId: string

/** Runs fn on the server's database; on PGlite the server is stopped around it and started again. */
async function onDatabase(fn: Parameters<typeof withDatabase>[1]) {
  if (process.env.DATABASE_URL) return withDatabase(server.dataDir, fn)
  await server.stop()
  await withDatabase(server.dataDir, fn)
  server = await startServer({ dataDir: server.dataDir, masterKey: server.masterKey })
  master = createApi(server.base, server.masterKey)
  dash = createApi(server.origin)
}

/** A hash in the stored format with the parameters used before issue 12 (N=2^15). */
function oldHash(pw: string) {
  const salt = randomBytes(32)
  const key = scryptSync(pw, salt, 32, { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 })
  return `scrypt$32768$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`
}

const inside = '198.51.100.20'
const outside = '203.0.113.9'

beforeAll(async () => {
  server = await startServer()
  master = createApi(server.base, server.masterKey)
  dash = createApi(server.origin)
  const email = uniqueEmail('ceiling')
  const created = await master.post('/users', { email, password })
  expect(created.status).toBe(201)
  user = { id: created.body.user_id, email }
  const wide = await master.post(`/users/${user.id}/credentials`, {
    name: 'wide',
    scopes: ['agents:read', 'agents:write'],
  })
  expect(wide.status).toBe(201)
  wideKeyId = wide.body.key_id
  await onDatabase(async (db) => {
    link = (
      await createLoginLink(
        db,
        user.id,
        { scopes: ['agents:read', 'credentials:manage'], ipAllowlist: ['198.51.100.0/24'] },
        server.origin,
      )
    ).token
    await db.db
      .update(users)
      .set({ passwordHash: oldHash(password) })
      .where(eq(users.id, user.id))
  })
}, 180_000)
afterAll(async () => {
  await server?.stop()
})

describe('the session a login link opens', () => {
  it('holds at most the issuing credential scopes and ip_allowlist', async () => {
    verifies('security.session-ceiling')
    const opened = await dash.post('/api/auth/login-link', { token: link }, { headers: { 'x-forwarded-for': inside } })
    expect(opened.status).toBe(200)
    const as = (ip: string) => ({
      headers: { 'x-forwarded-for': ip, authorization: `Session ${opened.body.session_token}` },
    })

    // Beyond the ceiling's scopes: refused, as for a key granting what it does not hold.
    const beyond = await dash.post('/api/api-keys', { scopes: ['agents:read', 'webhooks:manage'] }, as(inside))
    expect(beyond.status).toBe(400)
    expect(err(beyond)).toMatchObject({ code: 'invalid_scope', field: 'scopes' })
    // Within: the key inherits the session's ip_allowlist, so it cannot be used from anywhere else.
    const within = await dash.post('/api/api-keys', { scopes: ['agents:read'], expires_in_days: 365 }, as(inside))
    expect(within.status).toBe(201)
    expect(within.body.ip_allowlist).toEqual(['198.51.100.0/24'])
    expect(
      err(await dash.post('/api/api-keys', { scopes: ['agents:read'], ip_allowlist: ['0.0.0.0/0'] }, as(inside))),
    ).toMatchObject({ code: 'validation_error', field: 'ip_allowlist' })

    // Editing a wider key of the user: keeping its own scopes is fine, adding one the session lacks is not.
    expect((await dash.patch(`/api/api-keys/${wideKeyId}`, { scopes: ['agents:write'] }, as(inside))).status).toBe(200)
    expect(
      err(await dash.patch(`/api/api-keys/${wideKeyId}`, { scopes: ['agents:write', 'kb:write'] }, as(inside))),
    ).toMatchObject({ code: 'invalid_scope' })

    // Outside the allowlist the session is refused.
    const far = await dash.get('/api/api-keys', as(outside))
    expect(far.status).toBe(403)
    expect(err(far).code).toBe('ip_not_allowed')
    expect((await dash.get('/api/api-keys', as(inside))).status).toBe(200)
  })
})

describe('password hashing', () => {
  it('a hash with the old scrypt parameters logs in and is replaced by an N=2^17 hash', async () => {
    verifies('security.scrypt-params')
    const login = await dash.post(
      '/api/auth/login',
      { email: user.email, password },
      { headers: { 'x-forwarded-for': inside } },
    )
    expect(login.status).toBe(200)
    let stored = ''
    await onDatabase(async (db) => {
      stored = (await db.db.select({ h: users.passwordHash }).from(users).where(eq(users.id, user.id)))[0].h
    })
    expect(stored).toMatch(/^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{43}\$[A-Za-z0-9_-]{43}$/)
    // The upgraded hash verifies the same password, and only it.
    expect(
      (await dash.post('/api/auth/login', { email: user.email, password }, { headers: { 'x-forwarded-for': inside } }))
        .status,
    ).toBe(200)
    expect(
      (
        await dash.post(
          '/api/auth/login',
          { email: user.email, password: password + '!' },
          { headers: { 'x-forwarded-for': inside } },
        )
      ).status,
    ).toBe(401)
  }, 120_000)
})
