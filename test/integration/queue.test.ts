// The job queue on a real database (PGlite here, PostgreSQL when DATABASE_URL is set): a job sent
// before a "crash" is processed by the next process that starts the queue.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase, type Database } from '~/db/client'
import { migrate } from '~/db/migrate'
import { startQueue } from '~/jobs/_queue'
import { claimSlot } from '~/jobs/_cron'
import { defineJob } from '~/kit/job'
import { createRegistries } from '~/kit/registries'
import { loadConfig } from '~/config'
import { verifies } from '../requirements'

const dir = resolve('server/db/migrations')
const migrations = readdirSync(dir)
  .filter((n) => n.endsWith('.sql'))
  .map((name) => ({ name, sql: readFileSync(join(dir, name), 'utf8') }))
const dataDir = mkdtempSync(join(tmpdir(), 'svc-queue-'))
const url = process.env.DATABASE_URL
const open: Database[] = []

async function db() {
  const d = await openDatabase({ url, dataDir })
  open.push(d)
  await migrate(d, migrations)
  return d
}

/** The queue as a process starts it, on `database`, with these jobs only. */
const queueOn = (database: Database, jobs: Parameters<typeof startQueue>[0]['jobs']) =>
  startQueue({
    database,
    databaseUrl: url,
    jobs,
    pollSeconds: 0.5,
    log: () => {},
    registries: createRegistries(),
    config: loadConfig({ SVC_DATA_DIR: dataDir }),
  })

afterAll(async () => {
  for (const d of open) await d.close().catch(() => {})
})

describe('job queue', () => {
  it('a job survives the process that sent it and runs exactly once in the next', async () => {
    verifies('jobs.durable', 'storage.migrations')
    const name = `test.durable.${process.pid}.${Date.now()}`
    const seen: { data: any; id: string }[] = []
    const job = defineJob<{ n: number }>({
      name,
      async run(data, _ctx, meta) {
        seen.push({ data, id: meta.id })
      },
    })

    // First process: declares the queue but has no worker for it, sends, then goes away.
    const first = await db()
    const q1 = await queueOn(first, [])
    await q1.boss.createQueue(name)
    const id = await q1.send(name, { n: 42 })
    expect(id).toBeTruthy()
    await q1.stop()
    if (!url) {
      await first.close()
      open.pop()
    }

    // Second process: starts the worker and picks the job up.
    const second = url ? first : await db()
    const q2 = await queueOn(second, [job])
    const deadline = Date.now() + 20_000
    while (!seen.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    await new Promise((r) => setTimeout(r, 1500))
    await q2.stop()
    expect(seen).toEqual([{ data: { n: 42 }, id }])
  })

  it('applying the migrations twice is a no-op', async () => {
    verifies('storage.migrations')
    const d = open[0] ?? (await db())
    expect(await migrate(d, migrations)).toEqual([])
  })

  it('a cron slot is claimed by one instance: racing claims of a slot, one wins and learns the slot before', async () => {
    verifies('jobs.cron')
    const d = open[0] ?? (await db())
    // loadConfig answers its first result: the schema of this test is set on a copy.
    const schema = `pgboss_cron_${process.pid}`
    const config = { ...loadConfig({ SVC_DATA_DIR: dataDir }), queueSchema: schema }
    const q = await startQueue({
      database: d,
      databaseUrl: url,
      jobs: [],
      pollSeconds: 0.5,
      log: () => {},
      registries: createRegistries(),
      config,
    })
    try {
      const sql = d.executeSql.bind(d)
      // Another database connection each on PostgreSQL (the row lock is what serialises them).
      const others = url ? await Promise.all([1, 2, 3].map(() => openDatabase({ url, dataDir }))) : []
      open.push(...others)
      const claimers = [sql, ...others.map((o) => o.executeSql.bind(o))]
      const minute = 60_000
      const slot = Math.floor(Date.now() / minute) * minute - 10 * minute
      const first = await Promise.all(claimers.map((c) => claimSlot(c, schema, slot)))
      expect(first.filter((r) => r !== undefined)).toHaveLength(1)
      expect(await claimSlot(sql, schema, slot)).toBeUndefined()
      expect(await claimSlot(sql, schema, slot - minute)).toBeUndefined()
      const later = await Promise.all(claimers.map((c) => claimSlot(c, schema, slot + 2 * minute)))
      expect(later.filter((r) => r !== undefined)).toEqual([slot])
    } finally {
      await q.stop()
      if (url) await d.executeSql(`DROP SCHEMA ${schema} CASCADE`)
    }
  })

  it('a scheduled job runs at start and its sub-minute chain runs; on PGlite without the queue', async () => {
    verifies('jobs.local-sweeps')
    const d = open[0] ?? (await db())
    const name = `test.sweep.${process.pid}.${Date.now()}`
    const runs: number[] = []
    const job = defineJob({
      name,
      schedule: '0 0 1 1 *',
      runAtStart: true,
      policy: 'short',
      retryLimit: 0,
      async run(_data, ctx) {
        runs.push(Date.now())
        // The chain, as the idle sweep's: two sends while one waits fold into the one waiting run.
        if (runs.length < 3) {
          await ctx.send(name, {}, { startAfter: new Date(Date.now() + 300) })
          await ctx.send(name, {}, { startAfter: new Date(Date.now() + 600) })
        }
      },
    })
    const q = await queueOn(d, [job])
    try {
      const deadline = Date.now() + 20_000
      while (runs.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
      await new Promise((r) => setTimeout(r, 1500))
      expect(runs).toHaveLength(3)
      expect(runs[1]! - runs[0]!).toBeGreaterThanOrEqual(250)
      if (!url) {
        const schema = loadConfig({ SVC_DATA_DIR: dataDir }).queueSchema
        const { rows } = await d.executeSql(`SELECT count(*)::int AS n FROM ${schema}.job WHERE name = $1`, [name])
        expect(rows).toEqual([{ n: 0 }])
      }
    } finally {
      await q.stop()
    }
  })
})
