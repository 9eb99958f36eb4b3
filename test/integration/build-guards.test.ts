// On a server of its own and a database of its own (on PostgreSQL, one created for this file: its jobs must
// run with its own engine settings, never meet another test server's), whose openai engine points at a
// gateway that refuses connections:
// - build step errors, kb/status last_job.error and document errors show public sentences, never the
//   gateway URL, the refused address or the error code (the server log keeps the detail);
// - POST kb/reindex takes the daily reindexes quota (SVC_QUOTAS reindexes=2 here), 429 past it;
// - reindex and both build routes are 402 payment_required when billing blocks.
import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eq } from 'drizzle-orm'
import { createApi, err } from '../helpers/api'
import { waitForBuild } from '../helpers/build'
import { openDatabase } from '~/db/client'
import { ownDatabase, type OwnDatabase } from '../helpers/own-database'
import { startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'
import { subscriptions, usageRecords } from '~/db/schema'

let server: TestServer
let site: TestSite
let t: Tenant
let agentId: string
let deadPort: number
let env: Record<string, string | undefined>
let own: OwnDatabase
const INTERNAL = () => ['internal-gateway', `127.0.0.1:${deadPort}`, 'ECONNREFUSED', '[chat]', 'chat/completions']

/** A port that refuses connections: bound once for a free number, then closed. */
async function refusingPort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const port = (s.address() as { port: number }).port
  await new Promise((r) => s.close(r))
  return port
}

const leaks = (text: string | null | undefined) => INTERNAL().filter((s) => (text ?? '').includes(s))

beforeAll(async () => {
  deadPort = await refusingPort()
  own = await ownDatabase('build_guards')
  env = {
    ...own.env,
    SVC_CHAT_ENGINE: 'openai',
    OPENAI_BASE_URL: `http://127.0.0.1:${deadPort}/internal-gateway/v1`,
    OPENAI_API_KEY: 'sk-test-dead',
    SVC_QUOTAS: 'reindexes=2',
  }
  server = await startServer({ env })
  t = await createTenant(createApi(server.base, server.masterKey), { plan: 'starter' })
  site = await serveSite({ '/': { body: html('Gale Kites', '<p>Gale Kites repairs kites in Leeds.</p>') } })
}, 180_000)
afterAll(async () => {
  await server?.stop('SIGKILL')
  await site?.close()
  await own?.drop()
})

describe('public error texts', () => {
  it('a build whose engine is unreachable shows a public step error; the log has the detail', async () => {
    verifies('status.public-errors')
    const voiceId = (await t.api.get('/voices')).body.data[0].voice_id
    const r = await t.api.post(`/accounts/${t.accountId}/agents/build`, {
      website_url: `${site.origin}/`,
      voice_id: voiceId,
    })
    expect(r.status).toBe(202)
    agentId = r.body.agent_id
    const build = await waitForBuild(t.api, agentId, 90_000)
    expect(build.status).toBe('failed')
    expect(build.steps[0]).toMatchObject({ name: 'crawl', status: 'succeeded' })
    const failed = build.steps.find((s: any) => s.status === 'failed')
    expect(failed.error).toBe('The engine failed; try again.')
    expect(leaks(JSON.stringify(build))).toEqual([])
    expect(server.logs.join('')).toContain(`127.0.0.1:${deadPort}/internal-gateway`)
  }, 120_000)

  it('a failed reindex shows a public last_job.error in kb/status', async () => {
    verifies('status.public-errors', 'limits.reindexes')
    const r = await t.api.post(`/agents/${agentId}/kb/reindex`)
    expect(r.status).toBe(202)
    const status = await until(
      'the reindex to fail',
      async () => {
        const s = (await t.api.get(`/agents/${agentId}/kb/status`)).body
        return s.summary.last_job?.status === 'failed' ? s : null
      },
      60_000,
    )
    expect(status.summary.last_job.error).toBe('The engine failed; try again.')
    expect(leaks(JSON.stringify(status))).toEqual([])
  }, 90_000)

  it('a page at an address that refuses fails with a public error on the document', async () => {
    verifies('status.public-errors')
    const r = await t.api.post(`/agents/${agentId}/kb/documents`, {
      url: `http://127.0.0.1:${deadPort}/internal-gateway/page`,
      mode: 'page',
    })
    expect(r.status).toBe(202)
    const doc = await until(
      'the document to fail',
      async () => {
        const d = (await t.api.get(`/agents/${agentId}/kb/documents/${r.body.doc_id}`)).body
        return d.status === 'failed' ? d : null
      },
      30_000,
    )
    expect(doc.error).toBe('The site could not be reached.')
    expect(leaks(doc.error)).toEqual([])
  })
})

describe('reindexes quota and billing', () => {
  it('reindex takes the daily reindexes quota: the third of two is 429 with Retry-After; limits show it', async () => {
    verifies('limits.reindexes')
    // The reindex above took the first unit.
    expect((await t.api.post(`/agents/${agentId}/kb/reindex`)).status).toBe(202)
    const third = await t.api.post(`/agents/${agentId}/kb/reindex`)
    expect(third.status).toBe(429)
    expect(err(third).code).toBe('quota_exceeded')
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0)
    const limits = (await t.api.get(`/accounts/${t.accountId}/limits`)).body
    expect(limits.quotas.reindexes).toEqual({ limit: 2, used: 2 })
  })

  it('reindex and both build routes are 402 payment_required when billing blocks', async () => {
    verifies('limits.reindexes')
    await server.stop('SIGTERM')
    // This server's own database: its PGlite directory, or the PostgreSQL database made for this file.
    const db = await openDatabase({ url: own.on.url ?? undefined, dataDir: server.dataDir })
    try {
      await db.db.update(subscriptions).set({ walletBalance: 0 }).where(eq(subscriptions.accountId, t.accountId))
      await db.db.insert(usageRecords).values({
        accountId: t.accountId,
        channel: 'api',
        sessionId: 'api_spent',
        startedAt: new Date(),
        tokens: 1,
        costUsd: 10_000,
      })
    } finally {
      await db.close()
    }
    server = await startServer({
      dataDir: server.dataDir,
      masterKey: server.masterKey,
      env: { ...env, SVC_QUOTAS: 'reindexes=50' },
    })
    const api = createApi(server.base, t.key)
    const voiceId = (await api.get('/voices')).body.data[0].voice_id
    const responses = [
      await api.post(`/agents/${agentId}/kb/reindex`),
      await api.post(`/agents/${agentId}/build`, { from_step: 'summary' }),
      await api.post(`/accounts/${t.accountId}/agents/build`, { website_url: `${site.origin}/`, voice_id: voiceId }),
    ]
    for (const r of responses) {
      expect(r.status, r.text).toBe(402)
      expect(err(r).code).toBe('payment_required')
    }
    // Refused before anything was taken or written.
    const limits = (await api.get(`/accounts/${t.accountId}/limits`)).body.quotas
    expect(limits.reindexes.used).toBe(2)
    expect(limits.builds.used).toBe(1)
    expect((await api.get(`/agents/${agentId}/build`)).body.build_number).toBe(1)
  }, 90_000)
})
