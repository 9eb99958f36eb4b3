// Scheduled knowledge syncs on several instances (issue 32 Must show; decisions "Knowledge sync"): two
// instances on one PostgreSQL database, each sweeping every second with its own job queue, find one agent's
// daily sync due; the sync runs exactly once and fetches each page once. PostgreSQL only: PGlite admits
// one process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApi } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { withDatabase } from '../helpers/db'
import { startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { sleep, until } from '../helpers/wait'
import { verifies } from '../requirements'
import { kbDocuments } from '~/db/schema'
import { eq } from 'drizzle-orm'

const onPostgres = !!process.env.DATABASE_URL
const env = { SVC_KB_SYNC_SWEEP_SECONDS: '1', SVC_RATE_LIMITS: 'read=100000,write=100000' }

let one: TestServer
let two: TestServer | undefined
let site: TestSite
let t: Tenant

describe.skipIf(!onPostgres)('scheduled sync on two instances', () => {
  beforeAll(async () => {
    site = await serveSite(
      {
        '/': { body: html('Tidy Gardens', '<p>Tidy Gardens mows lawns in York.</p><a href="/rates">Rates</a>') },
        '/rates': { body: html('Rates', '<p>A lawn cut costs 30 pounds an hour.</p>') },
      },
      { validators: true },
    )
    one = await startServer({ env })
    t = await createTenant(createApi(one.base, one.masterKey))
  }, 120_000)
  afterAll(async () => {
    await Promise.all([one?.stop(), two?.stop()])
    await site?.close()
  })

  it('a due daily sync runs exactly once, and not again in the same period', async () => {
    verifies('fresh.sync.schedule-once')
    two = await startServer({ env, masterKey: one.masterKey })
    const agt = await buildAgent(t.api, t.accountId, `${site.origin}/`)
    const patch = await t.api.patch(`/agents/${agt}`, { kb_sync: { schedule: 'daily' } })
    expect(patch.status, patch.text).toBe(200)
    // Just built: the pages were fetched in this period, so nothing is due yet.
    await sleep(3000)
    expect((await t.api.get(`/agents/${agt}/kb/syncs`)).body.data).toEqual([])
    // Three days pass for the pages: both instances' sweeps now find the sync due at once.
    const mark = site.hits.length
    await withDatabase('', (db) =>
      db.db
        .update(kbDocuments)
        .set({ fetchedAt: new Date(Date.now() - 3 * 86_400_000) })
        .where(eq(kbDocuments.agentId, agt)),
    )
    const done = await until(
      'the scheduled sync',
      async () => {
        const list = (await t.api.get(`/agents/${agt}/kb/syncs`)).body.data
        return list.length && list[0].status !== 'running' && list
      },
      60_000,
    )
    // Several more sweeps of both instances.
    await sleep(5000)
    const list = (await t.api.get(`/agents/${agt}/kb/syncs`)).body.data
    expect(list).toHaveLength(1)
    expect(list[0]).toMatchObject({
      sync_id: done[0].sync_id,
      trigger: 'schedule',
      status: 'succeeded',
      not_modified: 2,
    })
    const pageHits = site.hits.slice(mark).filter((p) => p === '/' || p === '/rates')
    expect(pageHits.sort()).toEqual(['/', '/rates'])
  }, 180_000)
})
