// Documents stranded processing by a crash (findings of the chaos test), each state written by hand while
// the server is down, then taken up by the restarted server:
// - committed, but its instance was killed before the kb.ingest job was sent: no job at all;
// - every job sent has ended failed (its instance was killed on each attempt): no live job left;
// - its job was fetched by an instance killed before naming itself on it: active, unnamed, for 15 minutes.
// The requeue sweep (at start, then every minute) re-sends the first two; the reaper (_queue.ts) fails
// the third so that pg-boss retries it. A document whose ingest failed three times is given up as failed.
// And a build left running by jobs that have all ended (failed after their retries) is sent again once it
// is stale (15 minutes), while a younger one is left to its worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '~/db/client'
import { agentBuilds, kbDocuments } from '~/db/schema'
import { initialSteps } from '~/domain/builds/builds'
import { nextDocumentId } from '~/domain/agents/create'
import { startSeededServer, type SeededServer } from '../helpers/agents'
import { createApi } from '../helpers/api'
import { withDatabase } from '../helpers/db'
import { ownDatabase, type OwnDatabase } from '../helpers/own-database'
import { startServer } from '../helpers/server'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

let seeded: SeededServer<Tenant>
// On PostgreSQL a database of its own: another file's server would re-send these documents from its own queue.
let own: OwnDatabase
const docs = { unsent: '', failedOnce: '', failedThrice: '', unnamed: '' }
const builds = { stale: '', young: '' }

beforeAll(async () => {
  own = await ownDatabase('stranded')
  seeded = await startSeededServer({
    env: own.env,
    prepare: (master) => createTenant(master),
    agents: (t) => [{ accountId: t.accountId }, { accountId: t.accountId }],
  })
  const { server } = seeded
  const agentId = seeded.agentIds[0]
  const accountId = seeded.prepared.accountId
  const schema = server.queueSchema
  await server.stop('SIGKILL')
  await withDatabase(
    server.dataDir,
    async (db) => {
      const doc = (title: string) => plantDocument(db, { agentId, accountId, title })
      const job = (docId: string, state: 'failed' | 'active') =>
        db.executeSql(
          `INSERT INTO ${schema}.job (name, data, state, retry_limit, retry_delay, started_on, completed_on)
         VALUES ('kb.ingest', jsonb_build_object('doc_id', $1::text), $2::${schema}.job_state, 2, 1,
                 now() - interval '2 minutes', CASE WHEN $2 = 'failed' THEN now() - interval '1 minute' END)`,
          [docId, state],
        )
      docs.unsent = await doc('Unsent')
      docs.failedOnce = await doc('Failed once')
      await job(docs.failedOnce, 'failed')
      docs.failedThrice = await doc('Failed thrice')
      for (let i = 0; i < 3; i++) await job(docs.failedThrice, 'failed')
      docs.unnamed = await doc('Unnamed')
      await job(docs.unnamed, 'active')
      const build = async (agent: string, minutesAgo: number) => {
        const at = new Date(Date.now() - minutesAgo * 60_000)
        const [b] = await db.db
          .insert(agentBuilds)
          .values({
            agentId: agent,
            accountId,
            status: 'running',
            steps: initialSteps('greeting'),
            fromStep: 'greeting',
            buildNumber: 2,
            createdAt: at,
            startedAt: at,
          })
          .returning({ id: agentBuilds.id })
        // Its only job failed after its retries.
        await db.executeSql(
          `INSERT INTO ${schema}.job (name, data, state, retry_limit, retry_count, started_on, completed_on)
         VALUES ('agent.build', jsonb_build_object('build_id', $1::text), 'failed', 2, 2, $2, $2)`,
          [b.id, at.toISOString()],
        )
        return b.id
      }
      builds.stale = await build(agentId, 20)
      builds.young = await build(seeded.agentIds[1], 5)
    },
    own.on,
  )
  // Each case polls its document: reads well above the default limit.
  seeded.server = await startServer({
    dataDir: server.dataDir,
    masterKey: server.masterKey,
    env: { ...own.env, SVC_RATE_LIMITS: 'read=10000' },
  })
}, 120_000)

afterAll(async () => {
  await seeded?.server.stop()
  await own?.drop()
})

/** A processing text document, two minutes old, as a crash leaves it. */
async function plantDocument(db: Database, d: { agentId: string; accountId: string; title: string }) {
  return db.tx(async (tx) => {
    const id = await nextDocumentId(tx, 'text')
    await tx.insert(kbDocuments).values({
      id,
      agentId: d.agentId,
      accountId: d.accountId,
      kind: 'text',
      source: 'text',
      title: d.title,
      text: `The note "${d.title}" says the shop closes at five on Fridays.`,
      status: 'processing',
      createdAt: new Date(Date.now() - 120_000),
      updatedAt: new Date(Date.now() - 120_000),
    })
    return id
  })
}

async function settled(docId: string) {
  const api = createApi(seeded.server.base, seeded.prepared.key)
  return until(
    `${docId} to leave processing`,
    async () => {
      const r = await api.get(`/agents/${seeded.agentIds[0]}/kb/documents/${docId}`)
      expect(r.status, r.text).toBe(200)
      return r.body.status !== 'processing' ? r.body : null
    },
    30_000,
    250,
  )
}

describe('documents stranded processing by a crash', () => {
  it('one whose ingest job was never sent is indexed by the requeue sweep after a restart', async () => {
    verifies('kb.ingest-requeue')
    const doc = await settled(docs.unsent)
    expect(doc.status, doc.error).toBe('indexed')
    expect(doc.chars).toBeGreaterThan(0)
  }, 60_000)

  it('one whose only job ended failed is sent again and indexed', async () => {
    verifies('kb.ingest-requeue')
    const doc = await settled(docs.failedOnce)
    expect(doc.status, doc.error).toBe('indexed')
  }, 60_000)

  it('one whose job was fetched but never named by its instance is retried and indexed', async () => {
    verifies('reliability.jobs-unnamed')
    const doc = await settled(docs.unnamed)
    expect(doc.status, doc.error).toBe('indexed')
  }, 60_000)

  it('one whose ingest failed three times is given up as failed, with a public message', async () => {
    verifies('kb.ingest-requeue')
    const doc = await settled(docs.failedThrice)
    expect(doc.status).toBe('failed')
    expect(doc.error).toBe('An internal error stopped the work; try again.')
  }, 60_000)
})

describe('builds stranded running by a crash', () => {
  it('one whose jobs all ended is sent again once stale and finishes; a younger one is left to its worker', async () => {
    verifies('builds.requeue-running')
    const api = createApi(seeded.server.base, seeded.prepared.key)
    const stale = await until(
      `${builds.stale} to finish`,
      async () => {
        const r = await api.get(`/agents/${seeded.agentIds[0]}/build`)
        expect(r.status, r.text).toBe(200)
        expect(r.body.build_id).toBe(builds.stale)
        return r.body.status !== 'running' ? r.body : null
      },
      30_000,
      250,
    )
    expect(['succeeded', 'failed']).toContain(stale.status)
    expect(stale.finished_at).not.toBeNull()
    const young = await api.get(`/agents/${seeded.agentIds[1]}/build`)
    expect(young.status, young.text).toBe(200)
    expect(young.body.build_id).toBe(builds.young)
    expect(young.body.status).toBe('running')
  }, 60_000)
})
