// A first boot on a new embedded database starts from the build's PGlite snapshot (scripts/pglite-snapshot.mjs):
// the migrations and pg-boss's queues are already in it. These tests fail when the boot stops using it (the
// migrations or queues are made at boot instead), when it is stale (made from other migrations or jobs than
// the build's), or when its queue schema is not the one pg-boss makes itself. No timing is asserted.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PGlite } from '@electric-sql/pglite'
import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase } from '~/db/client'
import { migrate } from '~/db/migrate'
import { ENTRY, startServer, type TestServer } from '../helpers/server'
import { verifies } from '../requirements'

const SNAPSHOT = resolve(ENTRY, '../chunks/pglite-initdb.tar.gz')
const MIGRATIONS = resolve(fileURLToPath(import.meta.url), '../../../server/db/migrations')
const JOBS = resolve(fileURLToPath(import.meta.url), '../../../server/jobs')
const migrationNames = () => readdirSync(MIGRATIONS).filter((n) => n.endsWith('.sql'))
/** The committed migrations as the build ships them (#svc/migrations). */
const committed = () =>
  migrationNames()
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(MIGRATIONS, name), 'utf8') }))
const jobCount = () => readdirSync(JOBS).filter((n) => n.endsWith('.ts') && !n.startsWith('_')).length

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** Boots the built server on a new embedded data dir (no test template), stops it, and answers the dir. */
async function firstBoot(env: Record<string, string> = {}) {
  const spawnedAt = new Date()
  const server: TestServer = await startServer({ env: { DATABASE_URL: undefined, ...env }, template: false })
  dirs.push(server.dataDir)
  expect((await fetch(`${server.base}/health`)).status).toBe(200)
  await server.stop('SIGTERM')
  return { spawnedAt, dataDir: server.dataDir, logs: server.logs.join('') }
}

/** pg-boss's schema `schema` as the catalog describes it, the schema's name written `S`: objects and queues. */
async function describeSchema(pg: PGlite, schema: string) {
  const q = async (sql: string) =>
    JSON.stringify((await pg.query(sql, sql.includes('$1') ? [schema] : [])).rows).replaceAll(`${schema}.`, 'S.')
  return {
    relations: await q(`SELECT c.relname, c.relkind, c.relispartition FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 ORDER BY 1`),
    columns: await q(`SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) t, a.attnotnull,
        pg_get_expr(d.adbin, d.adrelid) def
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE n.nspname = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY 1, 2`),
    indexes: await q(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY 1`),
    constraints: await q(`SELECT c.relname, k.conname, pg_get_constraintdef(k.oid) def FROM pg_constraint k
      JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 ORDER BY 1, 2`),
    functions: await q(`SELECT p.proname, pg_get_functiondef(p.oid) def FROM pg_proc p
      JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY 1`),
    types: await q(`SELECT t.typname, array_agg(e.enumlabel ORDER BY e.enumsortorder) labels FROM pg_type t
      JOIN pg_namespace n ON n.oid = t.typnamespace LEFT JOIN pg_enum e ON e.enumtypid = t.oid
      WHERE n.nspname = $1 AND t.typtype = 'e' GROUP BY 1 ORDER BY 1`),
    version: await q(`SELECT version FROM ${schema}.version`),
    queues: await q(`SELECT name, policy, retry_limit, retry_delay, retry_backoff, expire_seconds,
      retention_minutes, dead_letter, partition_name FROM ${schema}.queue ORDER BY name`),
  }
}

describe.runIf(!process.env.DATABASE_URL)('first boot from the build snapshot (PGlite)', () => {
  let made: Awaited<ReturnType<typeof firstBoot>>

  it('finds every migration and every queue made before it started', async () => {
    verifies('storage.first-boot-snapshot')
    made = await firstBoot()
    expect(made.logs).not.toContain('applied migrations')
    expect(made.logs).not.toContain('dropped')
    const pg = await PGlite.create(join(made.dataDir, 'pglite'))
    try {
      const migrations = (await pg.query<{ name: string; applied_at: Date }>('SELECT * FROM schema_migrations')).rows
      expect(migrations.map((m) => m.name).sort()).toEqual(migrationNames().sort())
      for (const m of migrations) expect(m.applied_at.getTime()).toBeLessThan(made.spawnedAt.getTime())
      const queues = (await pg.query<{ name: string; created_on: Date }>(`SELECT name, created_on FROM pgboss.queue`))
        .rows
      // Every job kind's queue, none created by this boot (no cron queue: the jobs' cron is ours, jobs/_cron.ts).
      expect(queues.length).toBe(jobCount())
      for (const q of queues) expect(q.created_on.getTime(), q.name).toBeLessThan(made.spawnedAt.getTime())
    } finally {
      await pg.close()
    }
  }, 120_000)

  it("holds exactly the queue schema pg-boss makes at boot (another SVC_QUEUE_SCHEMA drops the snapshot's)", async () => {
    verifies('storage.first-boot-snapshot')
    const other = await firstBoot({ SVC_QUEUE_SCHEMA: 'pgboss_ref' })
    expect(other.logs).toContain("the snapshot's queue schema pgboss is not this process's queues: dropped")
    const a = await PGlite.create(join(made.dataDir, 'pglite'))
    const b = await PGlite.create(join(other.dataDir, 'pglite'))
    try {
      const gone = await b.query(`SELECT 1 FROM pg_namespace WHERE nspname = 'pgboss'`)
      expect(gone.rows).toHaveLength(0)
      const fromSnapshot = await describeSchema(a, 'pgboss')
      const byPgBoss = await describeSchema(b, 'pgboss_ref')
      expect(JSON.parse(fromSnapshot.queues)).toHaveLength(jobCount())
      expect(fromSnapshot).toEqual(byPgBoss)
    } finally {
      await a.close()
      await b.close()
    }
  }, 180_000)

  it('applies a migration newer than the snapshot on top of it; an existing data dir is opened as it is', async () => {
    verifies('storage.first-boot-snapshot', 'storage.migrations')
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-first-boot-'))
    dirs.push(dataDir)
    const database = await openDatabase({ dataDir, snapshot: SNAPSHOT })
    try {
      expect(database.fromSnapshot).toBe(true)
      // The committed migrations are in the snapshot with their checksums: only the new one applies.
      const all = committed()
      expect(await migrate(database, all)).toEqual([])
      const newer = { name: '9999_after_the_snapshot.sql', sql: 'CREATE TABLE after_the_snapshot (x int)' }
      expect(await migrate(database, [...all, newer])).toEqual([newer.name])
    } finally {
      await database.close()
    }
    const again = await openDatabase({ dataDir, snapshot: SNAPSHOT })
    try {
      expect(again.fromSnapshot).toBe(false)
      expect((await again.executeSql('SELECT count(*)::int AS n FROM after_the_snapshot')).rows[0].n).toBe(0)
    } finally {
      await again.close()
    }
  }, 120_000)
})
