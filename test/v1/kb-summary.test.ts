// The knowledge summary and status over HTTP. On the shared server: an agent built from a site the test
// serves has summary version 1; reindex moves the version; a manual replace is overwritten by the next
// reindex; errors and scopes. On a server of its own, with documents seeded in the database: pending
// sources and stale persisting until a reindex, keep-as-is sizes per surface with large synthetic
// documents (calls cap, verbatim_in_calls first, dropped documents summarised instead), the large tier,
// and a failing reindex shown in last_job and the log.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { eq } from 'drizzle-orm'
import { createApi, err, type Api } from '../helpers/api'
import { seedAgents } from '../helpers/agents'
import { withDatabase } from '../helpers/db'
import { startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'
import { buildAgent } from '../helpers/build'
import { agents, kbDocuments, kbSummaries } from '~/db/schema'
import { nextDocumentId } from '~/domain/agents/create'
import { acceptReindex, knowledgeFor, runReindex } from '~/domain/kb/summary'
import local from '../../providers/chat/local'
import { sleep, until } from '../helpers/wait'

/** Polls kb/status until the reindex it asked for has finished; answers the status. */
async function waitForReindex(api: Api, agentId: string, timeoutMs = 30_000) {
  return until(
    'the reindex to finish',
    async () => {
      const r = await api.get(`/agents/${agentId}/kb/status`)
      expect(r.status).toBe(200)
      const job = r.body.summary.last_job
      return job?.job === 'reindex' && ['succeeded', 'failed'].includes(job.status) && r.body
    },
    timeoutMs,
  )
}

describe('summary and reindex on a built agent (shared server)', () => {
  const base = inject('base')
  const master = createApi(base, inject('masterKey'))
  let t: Tenant
  let other: Tenant
  let site: TestSite
  let agentId: string

  beforeAll(async () => {
    site = await serveSite({
      '/': {
        body: html(
          'Quokka Cycles | Home',
          '<h1>Quokka Cycles</h1><p>Quokka Cycles repairs bicycles in Hobart.</p><a href="/prices">Prices</a> <a href="/team">Team</a>',
        ),
      },
      '/prices': {
        body: html(
          'Prices | Quokka Cycles',
          '<p>A puncture repair costs $12.</p><p>A full service costs $89 and takes two days.</p><p>Call +61 3 5550 1234 to book.</p>',
        ),
      },
      '/team': {
        body: html(
          'Team | Quokka Cycles',
          '<p>Our mechanic Barnaby Wobbleton has fixed bikes since 1994.</p><p>The shop opens Tuesday to Sunday from 9am.</p>',
        ),
      },
    })
    t = await createTenant(master)
    other = await createTenant(master)
    // buildAgent throws unless the build answers 202 and then succeeds.
    agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
  })
  afterAll(async () => {
    await site?.close()
  })

  it('after the build: summary version 1 from the build, nothing pending, not stale; status ready', async () => {
    verifies('kb.summary', 'kb.status')
    const s = await t.api.get(`/agents/${agentId}/kb/summary`)
    expect(s.status).toBe(200)
    expect(s.body).toMatchObject({ agent_id: agentId, version: 1, source: 'build', stale: false, pending_sources: 0 })
    expect(s.body.text).toContain('Barnaby Wobbleton')
    expect(s.body.meta.request_id).toBeTruthy()
    const st = await t.api.get(`/agents/${agentId}/kb/status`)
    expect(st.status).toBe(200)
    expect(st.body).toMatchObject({
      agent_id: agentId,
      summary: { status: 'ready', stale: false, pending_sources: 0, version: 1 },
      crawl: { status: 'idle' },
      vector_sync: null,
      verbatim: {
        chat: { documents: 0, chars: 0, cap: 1_000_000, dropped: [] },
        calls: { documents: 0, chars: 0, cap: 270_000, dropped: [] },
      },
    })
  })

  it('POST kb/reindex answers 202 rebuild_requested; the rebuild moves the version, pending stays 0', async () => {
    verifies('kb.reindex', 'kb.status')
    const r = await t.api.post(`/agents/${agentId}/kb/reindex`)
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ agent_id: agentId, status: 'rebuild_requested' })
    expect(r.body.meta).toBeTruthy()
    const st = await waitForReindex(t.api, agentId)
    expect(st.summary).toMatchObject({ status: 'ready', stale: false, pending_sources: 0, version: 2 })
    expect(st.summary.last_job).toMatchObject({ job: 'reindex', status: 'succeeded', error: null })
    expect(Date.parse(st.summary.last_job.finished_at)).toBeGreaterThanOrEqual(
      Date.parse(st.summary.last_job.started_at),
    )
    const s = (await t.api.get(`/agents/${agentId}/kb/summary`)).body
    expect(s).toMatchObject({ version: 2, source: 'reindex', pending_sources: 0 })
    // A real extractive summary: facts from the pages, not the pages glued together.
    expect(s.text).toContain('Barnaby Wobbleton')
    expect(s.text).toContain('$12')
    expect(s.text).not.toContain('Footer text')
  })

  it('PATCH kb/summary replaces the text (source manual, version moves); the next reindex overwrites it', async () => {
    verifies('kb.summary', 'kb.reindex')
    const manual = 'Quokka Cycles is closed for the winter holidays. Hand-written by the owner.'
    const p = await t.api.patch(`/agents/${agentId}/kb/summary`, { text: manual })
    expect(p.status).toBe(200)
    expect(p.body).toMatchObject({
      agent_id: agentId,
      text: manual,
      source: 'manual',
      version: 3,
      stale: false,
      pending_sources: 0,
    })
    expect((await t.api.get(`/agents/${agentId}/kb/summary`)).body).toMatchObject({
      text: manual,
      version: 3,
      source: 'manual',
    })
    expect((await t.api.post(`/agents/${agentId}/kb/reindex`)).status).toBe(202)
    const st = await waitForReindex(t.api, agentId)
    expect(st.summary.version).toBe(4)
    const s = (await t.api.get(`/agents/${agentId}/kb/summary`)).body
    expect(s).toMatchObject({ version: 4, source: 'reindex' })
    expect(s.text).not.toContain('winter holidays')
    expect(s.text).toContain('Barnaby Wobbleton')
  })

  it('PATCH errors: empty_update, unsupported_field, validation_error for empty, non-string or too long text', async () => {
    verifies('kb.summary', 'errors.validation_error', 'errors.empty_update', 'errors.unsupported_field')
    const url = `/agents/${agentId}/kb/summary`
    expect(err(await t.api.patch(url, {})).code).toBe('empty_update')
    expect(err(await t.api.patch(url)).code).toBe('empty_update')
    expect(err(await t.api.patch(url, { text: 'ok', version: 9 }))).toMatchObject({
      code: 'unsupported_field',
      field: 'version',
    })
    expect(err(await t.api.patch(url, { text: '' }))).toMatchObject({ code: 'validation_error', field: 'text' })
    expect(err(await t.api.patch(url, { text: '   ' }))).toMatchObject({ code: 'validation_error', field: 'text' })
    expect(err(await t.api.patch(url, { text: 42 }))).toMatchObject({ code: 'validation_error', field: 'text' })
    expect(err(await t.api.patch(url, { text: 'y'.repeat(200_001) }))).toMatchObject({
      code: 'validation_error',
      field: 'text',
    })
    const atCap = await t.api.patch(url, { text: 'y'.repeat(200_000) })
    expect(atCap.status).toBe(200)
    expect(atCap.body.text.length).toBe(200_000)
  })

  it("another tenant's agent is agent_not_found; a malformed id is invalid_id; scopes kb:read and kb:write", async () => {
    verifies('kb.summary', 'kb.status', 'tenancy.agents', 'conventions.ids', 'auth.scope')
    for (const r of [
      await other.api.get(`/agents/${agentId}/kb/summary`),
      await other.api.patch(`/agents/${agentId}/kb/summary`, { text: 'x y' }),
      await other.api.get(`/agents/${agentId}/kb/status`),
      await other.api.post(`/agents/${agentId}/kb/reindex`),
    ]) {
      expect(r.status).toBe(404)
      expect(err(r).code).toBe('agent_not_found')
    }
    expect(err(await t.api.get('/agents/agt_x/kb/status')).code).toBe('invalid_id')
    expect(err(await t.api.get('/agents/doc_1/kb/summary')).code).toBe('invalid_id')
    expect(err(await t.api.post('/agents/nope/kb/reindex')).code).toBe('invalid_id')
    const readKey = await master.post(`/users/${t.userId}/credentials`, { scopes: ['kb:read'] })
    const agentsKey = await master.post(`/users/${t.userId}/credentials`, { scopes: ['agents:read', 'agents:write'] })
    const kbRead = createApi(base, readKey.body.secret)
    const agentsOnly = createApi(base, agentsKey.body.secret)
    expect((await kbRead.get(`/agents/${agentId}/kb/summary`)).status).toBe(200)
    expect((await kbRead.get(`/agents/${agentId}/kb/status`)).status).toBe(200)
    expect(err(await kbRead.patch(`/agents/${agentId}/kb/summary`, { text: 'x y' })).code).toBe('insufficient_scope')
    expect(err(await kbRead.post(`/agents/${agentId}/kb/reindex`)).code).toBe('insufficient_scope')
    expect(err(await agentsOnly.get(`/agents/${agentId}/kb/summary`)).code).toBe('insufficient_scope')
    expect(err(await agentsOnly.get(`/agents/${agentId}/kb/status`)).code).toBe('insufficient_scope')
  })
})

describe('pending, stale and keep-as-is sizes with seeded documents (own server)', () => {
  const env = { SVC_RATE_LIMITS: 'read=100000,write=100000,build=100000' }
  let server: TestServer
  let t: Tenant
  let api: Api
  let small: string, largeTier: string, empty: string
  const ids: Record<string, string> = {}
  const filler = (n: number, lead: string) =>
    (lead + ' ' + 'Filler words repeat here without facts. '.repeat(Math.ceil(n / 40))).slice(0, n)

  beforeAll(async () => {
    server = await startServer({ env })
    t = await createTenant(createApi(server.base, server.masterKey))
    await server.stop('SIGTERM')
    ;[small, largeTier, empty] = await seedAgents(server.dataDir, [
      { accountId: t.accountId, name: 'Small' },
      { accountId: t.accountId, name: 'Large' },
      { accountId: t.accountId, name: 'Empty' },
    ])
    await withDatabase(server.dataDir, async (db) => {
      await db.tx(async (tx) => {
        const old = new Date(Date.now() - 3_600_000)
        const add = async (
          key: string,
          agentId: string,
          o: { title: string; text: string; keep?: boolean; inCalls?: boolean; at: number },
        ) => {
          ids[key] = await nextDocumentId(tx, 'text')
          await tx.insert(kbDocuments).values({
            id: ids[key],
            agentId,
            accountId: t.accountId,
            kind: 'text',
            title: o.title,
            status: 'indexed',
            text: o.text,
            chars: o.text.length,
            keepVerbatim: !!o.keep,
            verbatimInCalls: !!o.inCalls,
            source: 'text',
            createdAt: new Date(old.getTime() + o.at * 1000),
            updatedAt: new Date(old.getTime() + o.at * 1000),
          })
        }
        // Two ordinary documents the summary has not read yet, and three keep-as-is ones of 120,000 characters.
        await add('hours', small, {
          title: 'Opening hours',
          text: 'Kestrel Garage opens Monday to Friday from 8am to 6pm. The garage is closed on public holidays.',
          at: 1,
        })
        await add('prices', small, {
          title: 'Prices',
          text: 'An oil change at Kestrel Garage costs $79. A brake inspection costs $45 and takes one hour.',
          at: 2,
        })
        await add('v1', small, {
          title: 'Warranty terms',
          text: filler(120_000, 'WARRANTY-ALPHA: parts carry a two year warranty.'),
          keep: true,
          at: 3,
        })
        await add('v2', small, {
          title: 'Loan car policy',
          text: filler(120_000, 'The courtesy car password is Marmalade Heron. A loan car costs $25 per day.'),
          keep: true,
          at: 4,
        })
        await add('v3', small, {
          title: 'Call script',
          text: filler(120_000, 'CALLS-FIRST: always confirm the registration number.'),
          keep: true,
          inCalls: true,
          at: 5,
        })
        // Large tier: 2 × 600,000 characters fit chat (cap 2,000,000) but neither fits calls.
        await add('l1', largeTier, {
          title: 'Manual part 1',
          text: filler(600_000, 'Part one of the manual.'),
          keep: true,
          at: 1,
        })
        await add('l2', largeTier, {
          title: 'Manual part 2',
          text: filler(600_000, 'Part two of the manual.'),
          keep: true,
          at: 2,
        })
        await add('l3', largeTier, {
          title: 'Notes',
          text: 'Large tier agents serve Tasmania. The depot phone is +61 3 5550 9876.',
          at: 3,
        })
        // The small agent's summary was written before these documents: stale, version 1.
        await tx.insert(kbSummaries).values({
          agentId: small,
          accountId: t.accountId,
          text: 'Old summary about nothing in particular.',
          version: 1,
          source: 'build',
          stale: true,
          updatedAt: old,
        })
        await tx.update(agents).set({ useLargeModel: true }).where(eq(agents.id, largeTier))
      })
    })
    server = await startServer({ dataDir: server.dataDir, masterKey: server.masterKey, env })
    api = createApi(server.base, t.key)
  }, 120_000)
  afterAll(async () => {
    await server?.stop('SIGKILL')
  })

  it('keep-as-is sizes per surface: chat carries all three; calls carry verbatim_in_calls first and drop what exceeds 270,000', async () => {
    verifies('kb.verbatim', 'kb.status')
    const st = (await api.get(`/agents/${small}/kb/status`)).body
    expect(st.verbatim).toEqual({
      chat: { documents: 3, chars: 360_000, cap: 1_000_000, dropped: [] },
      calls: {
        documents: 2,
        chars: 240_000,
        cap: 270_000,
        dropped: [{ doc_id: ids.v2, title: 'Loan car policy', chars: 120_000 }],
      },
    })
    expect(st.vector_sync).toBeNull()
    expect(st.crawl).toMatchObject({ status: 'idle', crawl_id: null })
  })

  it('large tier: chat cap 2,000,000; calls stay at 270,000 and list both large documents as dropped', async () => {
    verifies('kb.verbatim', 'kb.status')
    const st = (await api.get(`/agents/${largeTier}/kb/status`)).body
    expect(st.verbatim.chat).toEqual({ documents: 2, chars: 1_200_000, cap: 2_000_000, dropped: [] })
    expect(st.verbatim.calls).toMatchObject({ documents: 0, chars: 0, cap: 270_000 })
    expect(st.verbatim.calls.dropped.map((d: any) => d.doc_id)).toEqual([ids.l1, ids.l2])
    expect(st.summary).toMatchObject({ status: 'none', version: 0, pending_sources: 3 })
  })

  it('new documents are pending and the summary stale; it stays stale (also through a manual replace) until a reindex', async () => {
    verifies('kb.status', 'kb.summary')
    // The two ordinary documents plus the keep-as-is one dropped from calls.
    const first = (await api.get(`/agents/${small}/kb/status`)).body.summary
    expect(first).toMatchObject({ status: 'ready', stale: true, pending_sources: 3, version: 1, last_job: null })
    await sleep(1200)
    expect((await api.get(`/agents/${small}/kb/status`)).body.summary).toMatchObject({
      stale: true,
      pending_sources: 3,
    })
    const p = await api.patch(`/agents/${small}/kb/summary`, { text: 'A manual note.' })
    expect(p.body).toMatchObject({ version: 2, source: 'manual', stale: true, pending_sources: 3 })
  })

  it('reindex reads the ordinary documents and the dropped keep-as-is one: pending 0, not stale, version moved', async () => {
    verifies('kb.reindex', 'kb.verbatim', 'kb.status')
    const r = await api.post(`/agents/${small}/kb/reindex`)
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ agent_id: small, status: 'rebuild_requested' })
    const st = await waitForReindex(api, small)
    expect(st.summary).toMatchObject({ status: 'ready', stale: false, pending_sources: 0, version: 3 })
    expect(st.summary.last_job).toMatchObject({ job: 'reindex', status: 'succeeded' })
    const s = (await api.get(`/agents/${small}/kb/summary`)).body
    expect(s.source).toBe('reindex')
    expect(s.text).toContain('$79')
    expect(s.text).toContain('Marmalade Heron')
    // Documents that every surface carries word for word are not summarised.
    expect(s.text).not.toContain('WARRANTY-ALPHA')
    expect(s.text).not.toContain('CALLS-FIRST')
    expect(s.text).not.toContain('A manual note.')
    expect(s.text.length).toBeLessThanOrEqual(6000)
  })

  it('a failed reindex keeps text and version, shows failed with the error in last_job, and reaches the log', async () => {
    verifies('kb.reindex', 'kb.status')
    expect((await api.get(`/agents/${empty}/kb/status`)).body.summary).toMatchObject({
      status: 'none',
      version: 0,
      last_job: null,
      pending_sources: 0,
    })
    expect((await api.post(`/agents/${empty}/kb/reindex`)).status).toBe(202)
    const st = await waitForReindex(api, empty)
    expect(st.summary).toMatchObject({ status: 'none', version: 0 })
    expect(st.summary.last_job).toMatchObject({ job: 'reindex', status: 'failed' })
    expect(st.summary.last_job.error).toMatch(/no indexed documents/i)
    expect((await api.get(`/agents/${empty}/kb/summary`)).body).toMatchObject({ text: null, version: 0, source: null })
    // On PostgreSQL the queue is shared by every test server, so another process may have run the job
    // and written the log line; the failure is asserted through last_job above on both engines.
    if (!process.env.DATABASE_URL) expect(server.logs.join('')).toContain(`kb reindex for ${empty} failed`)
  })

  it('the runtime knowledge block of each surface: summary first, calls without the dropped document, chat with all three', async () => {
    verifies('kb.assembly', 'kb.verbatim')
    await server.stop('SIGTERM')
    await withDatabase(server.dataDir, async (db) => {
      const agent = { id: small, useLargeModel: false }
      const chat = await knowledgeFor(db.db, agent, 'chat')
      const phone = await knowledgeFor(db.db, agent, 'phone')
      expect(await knowledgeFor(db.db, agent, 'voice_chat')).toBe(phone)
      const summary = (await db.db.select().from(kbSummaries).where(eq(kbSummaries.agentId, small)))[0].text
      for (const block of [chat, phone]) expect(block.startsWith(`### Summary\n${summary.trim()}`)).toBe(true)
      const at = (b: string, s: string) => b.indexOf(s)
      expect(at(chat, 'WARRANTY-ALPHA')).toBeLessThan(at(chat, '### Document: Loan car policy'))
      expect(at(chat, '### Document: Loan car policy')).toBeLessThan(at(chat, 'CALLS-FIRST'))
      expect(at(phone, 'CALLS-FIRST')).toBeGreaterThan(0)
      expect(at(phone, 'CALLS-FIRST')).toBeLessThan(at(phone, 'WARRANTY-ALPHA'))
      expect(phone).not.toContain('### Document: Loan car policy')
      expect(chat.length).toBeGreaterThan(360_000)
      expect(phone.length).toBeLessThan(240_000 + summary.length + 200)
    })
  })

  it('a reindex job is idempotent: a second delivery does nothing; a newer request supersedes a queued one', async () => {
    verifies('kb.reindex')
    await server.stop('SIGTERM')
    await withDatabase(server.dataDir, async (db) => {
      const agent = { id: small, accountId: t.accountId }
      const version = async () =>
        (await db.db.select().from(kbSummaries).where(eq(kbSummaries.agentId, small)))[0].version
      const logs: string[] = []
      const before = await version()
      await db.tx((tx) => acceptReindex(tx, agent, 'req-a'))
      expect(await runReindex(db, local, small, 'req-a', (m) => logs.push(m))).toMatchObject({ status: 'succeeded' })
      expect(await runReindex(db, local, small, 'req-a', (m) => logs.push(m))).toBeNull()
      expect(await version()).toBe(before + 1)
      await db.tx((tx) => acceptReindex(tx, agent, 'req-b'))
      await db.tx((tx) => acceptReindex(tx, agent, 'req-c'))
      expect(await runReindex(db, local, small, 'req-b', (m) => logs.push(m))).toBeNull()
      expect(await runReindex(db, local, small, 'req-c', (m) => logs.push(m))).toMatchObject({
        status: 'succeeded',
        request_id: 'req-c',
      })
      expect(await version()).toBe(before + 2)
      expect(logs).toEqual([])
    })
  })
})
