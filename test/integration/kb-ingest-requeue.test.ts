// A document committed whose ingest job was never sent (its instance was killed between the commit and the
// send; a finding of the chaos test) stayed processing for ever. The state such a crash leaves is written
// by hand while the server is down (a processing text document, two minutes old, with no job), and the
// restarted server's requeue sweep (run at start, then every minute) indexes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSeededServer, type SeededServer } from '../helpers/agents'
import { createApi } from '../helpers/api'
import { withDatabase } from '../helpers/db'
import { startServer } from '../helpers/server'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'
import { kbDocuments } from '~/db/schema'
import { nextDocumentId } from '~/domain/agents/create'

let seeded: SeededServer<Tenant>

beforeAll(async () => {
  seeded = await startSeededServer({
    prepare: (master) => createTenant(master),
    agents: (t) => [{ accountId: t.accountId }],
  })
}, 120_000)

afterAll(async () => {
  await seeded?.server.stop()
})

describe('a document whose ingest job was never sent', () => {
  it('is indexed by the requeue sweep after a restart', async () => {
    verifies('kb.ingest-requeue')
    const { server } = seeded
    const agentId = seeded.agentIds[0]
    await server.stop('SIGKILL')
    const docId = await withDatabase(server.dataDir, async (db) =>
      db.tx(async (tx) => {
        const id = await nextDocumentId(tx, 'text')
        await tx.insert(kbDocuments).values({
          id,
          agentId,
          accountId: seeded.prepared.accountId,
          kind: 'text',
          source: 'text',
          title: 'Stranded',
          text: 'The stranded note says the shop closes at five on Fridays.',
          status: 'processing',
          createdAt: new Date(Date.now() - 120_000),
          updatedAt: new Date(Date.now() - 120_000),
        })
        return id
      }),
    )
    seeded.server = await startServer({ dataDir: server.dataDir, masterKey: server.masterKey })
    const api = createApi(seeded.server.base, seeded.prepared.key)
    const doc = await until(
      `${docId} to leave processing`,
      async () => {
        const r = await api.get(`/agents/${agentId}/kb/documents/${docId}`)
        expect(r.status, r.text).toBe(200)
        return r.body.status !== 'processing' ? r.body : null
      },
      30_000,
    )
    expect(doc.status, doc.error).toBe('indexed')
    expect(doc.chars).toBeGreaterThan(0)
  }, 120_000)
})
