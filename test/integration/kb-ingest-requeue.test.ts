// Documents stranded processing by a crash (findings of the chaos test), each state written by hand while
// the server is down, then taken up by the restarted server:
// - committed, but its instance was killed before the kb.ingest job was sent: no job at all;
// - every job sent has ended failed (its instance was killed on each attempt): no live job left;
// - its job was fetched by an instance killed before naming itself on it: active, unnamed, for 15 minutes.
// The requeue sweep (at start, then every minute) re-sends the first two; the reaper (_queue.ts) fails
// the third so that pg-boss retries it. A document whose ingest failed three times is given up as failed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '~/db/client'
import { kbDocuments } from '~/db/schema'
import { nextDocumentId } from '~/domain/agents/create'
import { startSeededServer, type SeededServer } from '../helpers/agents'
import { createApi } from '../helpers/api'
import { withDatabase } from '../helpers/db'
import { startServer } from '../helpers/server'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

let seeded: SeededServer<Tenant>
const docs = { unsent: '', failedOnce: '', failedThrice: '', unnamed: '' }

beforeAll(async () => {
  seeded = await startSeededServer({
    prepare: (master) => createTenant(master),
    agents: (t) => [{ accountId: t.accountId }],
  })
  const { server } = seeded
  const agentId = seeded.agentIds[0]
  const accountId = seeded.prepared.accountId
  const schema = server.queueSchema
  await server.stop('SIGKILL')
  await withDatabase(server.dataDir, async (db) => {
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
  })
  // Each case polls its document: reads well above the default limit.
  seeded.server = await startServer({
    dataDir: server.dataDir,
    masterKey: server.masterKey,
    env: { SVC_RATE_LIMITS: 'read=10000' },
  })
}, 120_000)

afterAll(async () => {
  await seeded?.server.stop()
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
