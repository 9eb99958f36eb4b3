// The job queue on a real database (PGlite here, PostgreSQL when DATABASE_URL is set): a job sent
// before a "crash" is processed by the next process that starts the queue.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase, type Database } from '~/db/client'
import { migrate } from '~/db/migrate'
import { startQueue } from '~/jobs/_queue'
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
    const q1 = await startQueue({
      database: first,
      databaseUrl: url,
      jobs: [],
      pollSeconds: 0.5,
      log: () => {},
      registries: createRegistries(),
      config: loadConfig({ SVC_DATA_DIR: dataDir }),
    })
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
    const q2 = await startQueue({
      database: second,
      databaseUrl: url,
      jobs: [job],
      pollSeconds: 0.5,
      log: () => {},
      registries: createRegistries(),
      config: loadConfig({ SVC_DATA_DIR: dataDir }),
    })
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
})
