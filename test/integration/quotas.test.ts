// Daily quotas on a real database: consumption up to the limit, 429 quota_exceeded with Retry-After
// until 00:00 UTC, per-user overrides, the next UTC day, and no over-spend under concurrency.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sql } from 'drizzle-orm'
import { openDatabase, type Database } from '~/db/client'
import { migrate } from '~/db/migrate'
import { consumeQuota, quotaUsed } from '~/domain/limits/quotas'
import { createUser } from '~/domain/users/users'
import { verifies } from '../requirements'

const dir = resolve('server/db/migrations')
const migrations = readdirSync(dir)
  .filter((n) => n.endsWith('.sql'))
  .map((name) => ({ name, sql: readFileSync(join(dir, name), 'utf8') }))
let db: Database

beforeAll(async () => {
  db = await openDatabase({ url: process.env.DATABASE_URL, dataDir: mkdtempSync(join(tmpdir(), 'svc-quota-')) })
  await migrate(db, migrations)
})
afterAll(async () => {
  await db?.close()
})

const newAccount = async () =>
  (
    await createUser(db, {
      email: `q-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`,
      plan: 'starter',
      currency_code: 'USD',
    })
  ).account_id

describe('daily quotas', () => {
  it('consume up to the limit, then 429 quota_exceeded with Retry-After until 00:00 UTC; the next day starts at 0', async () => {
    verifies('accounts.limits')
    const acc = await newAccount()
    const noon = new Date('2026-11-22T12:00:00Z')
    await db.db.execute(
      sql`UPDATE users SET limits = '{"max_agent_creates_per_day": 2}'::jsonb WHERE account_id = ${acc}`,
    )
    expect(await consumeQuota(db.db, acc, 'agent_creates', 1, noon)).toBe(1)
    expect(await consumeQuota(db.db, acc, 'agent_creates', 1, noon)).toBe(2)
    const e = await consumeQuota(db.db, acc, 'agent_creates', 1, noon).catch((x) => x)
    expect(e).toMatchObject({ status: 429, code: 'quota_exceeded', headers: { 'Retry-After': String(12 * 3600) } })
    expect((await quotaUsed(db.db, acc, noon)).agent_creates).toBe(2)
    expect(await consumeQuota(db.db, acc, 'agent_creates', 1, new Date('2026-11-23T00:00:01Z'))).toBe(1)
    // Other kinds keep their defaults.
    expect(await consumeQuota(db.db, acc, 'builds', 50, noon)).toBe(50)
    await expect(consumeQuota(db.db, acc, 'builds', 1, noon)).rejects.toMatchObject({ code: 'quota_exceeded' })
  })

  it('never over-spends when many consumers race for the last units', async () => {
    verifies('accounts.limits')
    const acc = await newAccount()
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, () => consumeQuota(db.db, acc, 'webhook_tests')),
    )
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(30)
    const more = await Promise.allSettled(Array.from({ length: 40 }, () => consumeQuota(db.db, acc, 'webhook_tests')))
    expect(more.filter((r) => r.status === 'fulfilled')).toHaveLength(20)
    expect((await quotaUsed(db.db, acc)).webhook_tests).toBe(50)
  })
})
