// An Idempotency-Key promised one write per key, but its answer was stored after the handler's transaction
// committed, apart from it. Two ways to write twice followed (the 15-minute chaos run found the first):
//  - a request slow past the 5-minute takeover kept running, and both it and the retry that took its claim
//    over committed (two documents for one key);
//  - a request that committed and then failed (a 5xx, or its process killed) released its key, and the
//    retry ran the request again.
// Now every transaction of a keyed request ends with the claim's fence: the claim becomes committed with the
// write, or the write rolls back when the claim is no longer its own; a committed claim without an answer
// is lost, and a repeat is 409 idempotency_answer_lost instead of a second run.
// PostgreSQL only: the test holds a row lock from its own connection while the server runs, and makes the
// job queue refuse a send, which needs the database open beside the server.
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '~/db/client'
import { openDatabase } from '~/db/client'
import { createApi, err, type ApiResponse } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { sleep, until } from '../helpers/wait'
import { verifies } from '../requirements'

const url = process.env.DATABASE_URL
const tag = `${process.pid}_${Date.now().toString(36)}`
const queueSchema = `pgboss_fence_${tag}`

describe.skipIf(!url)('Idempotency-Key fenced by the write (PostgreSQL)', () => {
  let server: TestServer
  let site: TestSite
  let t: Tenant
  let agent: string
  let db: Database
  beforeAll(async () => {
    server = await startServer({ env: { SVC_QUEUE_SCHEMA: queueSchema } })
    site = await serveSite({ '/': { body: html('Numbat Nails', '<h1>Numbat Nails</h1><p>Nails in Darwin.</p>') } })
    t = await createTenant(createApi(server.base, server.masterKey))
    agent = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    db = await openDatabase({ url, dataDir: server.dataDir })
  }, 120_000)
  afterAll(async () => {
    await db?.close()
    await server?.stop()
    await site?.close()
  })

  const add = (key: string, title: string) =>
    t.api.post(
      `/agents/${agent}/kb/documents`,
      { title, text: `${title}: the nail service takes one day.` },
      { headers: { 'idempotency-key': key } },
    )
  const claimOf = async (key: string) => {
    const rows = (await db.db.execute(
      sql`SELECT state, created_at > now() - interval '1 minute' AS fresh FROM idempotency_keys WHERE key LIKE ${`${key} %`}`,
    )) as unknown as { state: string; fresh: boolean }[]
    return rows[0] ?? null
  }
  const titled = async (title: string) =>
    ((await t.api.get(`/agents/${agent}/kb/documents?limit=100`)).body.data as { title: string }[]).filter(
      (d) => d.title === title,
    ).length

  it('a request whose claim was taken over cannot commit: one document, the retry answers', async () => {
    verifies('idempotency.fenced')
    const key = `fence-${tag}`
    const title = `Fenced ${tag}`
    // Hold the agent row so the first request waits inside its transaction (the upload admission locks it).
    let open!: () => void
    const gate = new Promise<void>((r) => {
      open = r
    })
    let held!: () => void
    const holding = new Promise<void>((r) => {
      held = r
    })
    const holder = db.tx(async (tx) => {
      await tx.execute(sql`SELECT 1 FROM agents WHERE id = ${agent} FOR UPDATE`)
      held()
      await gate
    })
    await holding
    const first = add(key, title)
    await until('the first claim', async () => (await claimOf(key))?.state === 'running')
    // Five minutes pass for the claim: the next request with the key takes it over.
    await db.db.execute(
      sql`UPDATE idempotency_keys SET created_at = created_at - interval '6 minutes' WHERE key LIKE ${`${key} %`}`,
    )
    const second = add(key, title)
    await until('the takeover', async () => (await claimOf(key))?.fresh === true)
    await sleep(300) // both now wait for the agent row
    open()
    await holder
    const [a, b] = (await Promise.all([first, second])) as [ApiResponse, ApiResponse]
    expect(a.status, a.text).toBe(409)
    expect(err(a).code).toBe('idempotency_key_in_use')
    expect(b.status, b.text).toBe(202)
    expect(await titled(title)).toBe(1)
    const again = await add(key, title)
    expect(again.status).toBe(202)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body.doc_id).toBe(b.body.doc_id)
  }, 60_000)

  it('a request that failed after its write committed is not run again: 409 idempotency_answer_lost', async () => {
    verifies('idempotency.fenced')
    const key = `lost-${tag}`
    const title = `Lost ${tag}`
    // The job queue refuses the ingest job: the document is committed, then the send fails (a 5xx).
    await db.executeSql(
      `CREATE FUNCTION ${queueSchema}.refuse_ingest() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN RAISE EXCEPTION 'the test refuses kb.ingest'; END $$`,
    )
    // DDL on the partitioned job table locks its partitions while the server's workers read and write them:
    // PostgreSQL may pick the DDL as a deadlock's victim (40P01), which says nothing about the fence. Retry it.
    const ddl = async (statement: string) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await db.executeSql(statement)
        } catch (err) {
          if ((err as { code?: string }).code !== '40P01' || attempt === 5) throw err
        }
      }
    }
    await ddl(
      `CREATE TRIGGER refuse_ingest BEFORE INSERT ON ${queueSchema}.job FOR EACH ROW
         WHEN (NEW.name = 'kb.ingest') EXECUTE FUNCTION ${queueSchema}.refuse_ingest()`,
    )
    let failed: ApiResponse
    try {
      failed = await add(key, title)
    } finally {
      await ddl(`DROP TRIGGER refuse_ingest ON ${queueSchema}.job`)
    }
    expect(failed.status, failed.text).toBe(500)
    expect((await claimOf(key))?.state).toBe('lost')
    const retry = await add(key, title)
    expect(retry.status, retry.text).toBe(409)
    expect(err(retry)).toMatchObject({ code: 'idempotency_answer_lost', field: 'Idempotency-Key' })
    expect(await titled(title)).toBe(1)
    // A new key is a new request.
    const fresh = await add(`${key}-2`, title)
    expect(fresh.status).toBe(202)
    expect(await titled(title)).toBe(2)
  }, 60_000)
})
