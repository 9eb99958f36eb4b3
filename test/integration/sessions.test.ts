// Session and login-link lifetimes against a real database with a moved clock (HTTP tests cannot wait
// 15 minutes or 12 hours): expired tokens resolve to nothing, and only hashes are stored.
import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase, type Database } from '~/db/client'
import { migrate } from '~/db/migrate'
import { loginLinks, sessions } from '~/db/schema'
import { masterPrincipal } from '~/domain/credentials/authenticate'
import { createUser } from '~/domain/users/users'
import {
  createSession,
  NO_CEILING,
  issueLoginLink,
  LOGIN_LINK_TTL_MS,
  redeemLoginLink,
  resolveSession,
  SESSION_TTL_MS,
} from '~/domain/sessions/sessions'
import { uniqueEmail } from '../helpers/api'
import { verifies } from '../requirements'

const dir = resolve('server/db/migrations')
const migrations = readdirSync(dir)
  .filter((n) => n.endsWith('.sql'))
  .map((name) => ({ name, sql: readFileSync(join(dir, name), 'utf8') }))
let database: Database
let user: { id: string; accountId: string }

beforeAll(async () => {
  database = await openDatabase({
    url: process.env.DATABASE_URL,
    dataDir: mkdtempSync(join(tmpdir(), 'svc-sessions-')),
  })
  await migrate(database, migrations)
  const u = await createUser(database, {
    email: uniqueEmail('ses'),
    plan: 'trial',
    currency_code: 'USD',
    password: 'correct horse battery',
  })
  user = { id: u.user_id, accountId: u.account_id }
}, 180_000) // a fresh PGlite plus one scrypt N=2^17 run, slow on a loaded machine
afterAll(async () => {
  await database?.close()
})

describe('session lifetime', () => {
  it('a session resolves for 12 hours and not after; only the hash is stored', async () => {
    verifies('dashboard.session')
    const start = new Date()
    const s = await createSession(database, user, NO_CEILING, start)
    expect(await resolveSession(database, s.token, new Date(start.getTime() + SESSION_TTL_MS - 1000))).toMatchObject({
      userId: user.id,
      accountId: user.accountId,
    })
    expect(await resolveSession(database, s.token, new Date(start.getTime() + SESSION_TTL_MS + 1))).toBeNull()
    const stored = (await database.db.select().from(sessions)).map((r) => r.tokenHash)
    expect(stored).not.toContain(s.token)
    expect(stored).toContain(createHash('sha256').update(s.token).digest('hex'))
  })
})

describe('login link lifetime', () => {
  it('a link redeems within 15 minutes, never after, and never twice', async () => {
    verifies('dashboard.login-links')
    const issued = new Date(Date.now() - LOGIN_LINK_TTL_MS - 1000)
    const stale = await issueLoginLink(database, masterPrincipal(), user.id, 'https://svc.example', issued)
    await expect(redeemLoginLink(database, stale.token)).rejects.toMatchObject({
      status: 401,
      code: 'invalid_credentials',
    })
    const fresh = await issueLoginLink(database, masterPrincipal(), user.id, 'https://svc.example')
    expect(fresh.url).toBe(`https://svc.example/api/auth/login-link?token=${fresh.token}`)
    const almost = new Date(Date.now() + LOGIN_LINK_TTL_MS - 5000)
    expect((await redeemLoginLink(database, fresh.token, almost)).userId).toBe(user.id)
    await expect(redeemLoginLink(database, fresh.token, almost)).rejects.toMatchObject({ status: 401 })
    const stored = (await database.db.select().from(loginLinks)).map((r) => r.tokenHash)
    expect(stored).not.toContain(fresh.token)
  })
})
