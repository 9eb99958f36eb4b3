// A rebuild locked its agent (FOR UPDATE) and then its account, while a conversation create's foreign-key
// checks take KEY SHARE on the account and then on the agent: under load (the chaos test's rebuilds beside
// chat sessions) PostgreSQL found the cycle and POST /conversations answered 500 deadlock_detected. The row
// locks are now FOR NO KEY UPDATE, which foreign-key checks do not wait for. Rebuilds fired together with a
// burst of conversation creates on the same agent, a few rounds, must all answer without a 5xx.
// PostgreSQL only: PGlite runs one statement at a time, so it has no lock cycles.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApi } from '../helpers/api'
import { buildAgent, waitForBuild } from '../helpers/build'
import { startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

describe.skipIf(!process.env.DATABASE_URL)('rebuilds beside conversation creates (PostgreSQL)', () => {
  let server: TestServer
  let site: TestSite
  let t: Tenant
  let agent: string
  beforeAll(async () => {
    server = await startServer({ env: { SVC_RATE_LIMITS: 'read=100000,write=100000,build=100000' } })
    site = await serveSite({ '/': { body: html('Dingo Donuts', '<h1>Dingo Donuts</h1><p>Donuts in Perth.</p>') } })
    t = await createTenant(createApi(server.base, server.masterKey))
    agent = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
    await site?.close()
  })

  it('never deadlocks: every create answers 201 and every rebuild 202', async () => {
    verifies('builds.lock-order')
    for (let round = 0; round < 4; round++) {
      const answers = await Promise.all([
        t.api.post(`/agents/${agent}/build`, { from_step: 'crawl' }),
        ...Array.from({ length: 12 }, () => t.api.post('/conversations', { agent_id: agent })),
      ])
      expect(answers.map((r) => r.status)).toEqual([202, ...Array(12).fill(201)])
      expect((await waitForBuild(t.api, agent)).status).toBe('succeeded')
    }
  }, 120_000)
})
