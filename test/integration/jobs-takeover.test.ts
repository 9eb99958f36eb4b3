// Jobs of a killed instance are taken over by another one at once (a finding of the chaos test): pg-boss
// records no worker, so a job whose process was SIGKILLed stayed active until it expired (15 minutes), and
// its build stayed running and its document processing as long. Here instance A runs a rebuild and a page
// ingest that wait on a slow site, A is SIGKILLed mid-fetch, and instance B (same database, same queue
// schema) finishes both within seconds. PostgreSQL only: two instances need one shared database.
import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { createApi } from '../helpers/api'
import { buildAgent, waitForBuild } from '../helpers/build'
import { startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

describe.skipIf(!process.env.DATABASE_URL)('jobs of a killed instance (PostgreSQL)', () => {
  const servers: TestServer[] = []
  let site: TestSite | undefined
  afterAll(async () => {
    for (const s of servers) await s.stop('SIGKILL').catch(() => {})
    await site?.close()
  })

  it('a build and an ingest cut off by SIGKILL finish on the other instance within seconds', async () => {
    verifies('reliability.jobs-takeover')
    const env = {
      SVC_QUEUE_SCHEMA: `pgboss_takeover_${randomBytes(4).toString('hex')}`,
      // A stopped instance is known dead after 3 s of silence (15 by default).
      SVC_CALL_STALE_SECONDS: '3',
      SVC_RATE_LIMITS: 'read=10000,write=10000,build=10000',
    }
    const pages: Parameters<typeof serveSite>[0] = {
      '/': { body: html('Kelpie Kites', '<h1>Kelpie Kites</h1><p>Kelpie Kites sells kites in Hobart.</p>') },
      '/prices': { body: html('Prices', '<h1>Prices</h1><p>A box kite costs forty dollars.</p>') },
    }
    site = await serveSite(pages)
    const a = await startServer({ env })
    servers.push(a)
    const t = await createTenant(createApi(a.base, a.masterKey))
    const agent = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })

    // Both jobs now wait 8 s on the site (under the 10 s fetch timeout): A dies while they wait.
    pages['/'].delayMs = 8000
    pages['/prices'].delayMs = 8000
    const hitsBefore = site.hits.length
    const rebuild = await t.api.post(`/agents/${agent}/build`, { from_step: 'crawl' })
    expect(rebuild.status, rebuild.text).toBe(202)
    const doc = await t.api.post(`/agents/${agent}/kb/documents`, { url: `${site.origin}/prices`, mode: 'page' })
    expect(doc.status, doc.text).toBe(202)
    await until(
      'both fetches to reach the site',
      async () => {
        const hits = site!.hits.slice(hitsBefore)
        return hits.includes('/') && hits.includes('/prices')
      },
      20_000,
      50,
    )
    await a.stop('SIGKILL')
    pages['/'].delayMs = 0
    pages['/prices'].delayMs = 0

    const b = await startServer({ env, masterKey: a.masterKey })
    servers.push(b)
    const onB = createApi(b.base, t.key)
    const started = Date.now()
    const build = await waitForBuild(onB, agent, 60_000)
    expect(build.status, JSON.stringify(build.steps)).toBe('succeeded')
    expect(build.build_number).toBe(2)
    const indexed = await until(
      'the page document to be indexed',
      async () => {
        const r = await onB.get(`/agents/${agent}/kb/documents/${doc.body.doc_id}`)
        return r.body.status !== 'processing' ? r.body : null
      },
      60_000,
    )
    expect(indexed.status, indexed.error).toBe('indexed')
    expect(indexed.text).toContain('forty dollars')
    const seconds = (Date.now() - started) / 1000
    console.log(`[takeover] build and ingest finished on the other instance ${seconds.toFixed(1)} s after it booted`)
    // Well under pg-boss's 15-minute expiry: the stale window (3 s), the reaper (5 s) and the retry delay.
    expect(seconds).toBeLessThan(60)
  }, 180_000)
})
