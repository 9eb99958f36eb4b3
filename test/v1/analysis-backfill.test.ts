// The analysis backfill over many past conversations on a server of its own (issue 31 "Must show": 1,000
// on PostgreSQL; 200 on PGlite, still two batches): conversations imported before the agent had an analysis
// setting, one backfill that analyses each once (one analysis and one conversation.analyzed per
// conversation), and a second run that finds nothing pending and adds nothing. Prints the time it took.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApi } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { withDatabase } from '../helpers/db'
import { startReceiver, type Receiver } from '../helpers/receiver'
import { startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { sleep, until } from '../helpers/wait'
import { verifies } from '../requirements'

const N = process.env.DATABASE_URL ? 1_000 : 200
const ago = (ms: number) => new Date(Date.now() - ms).toISOString()

describe('analysis backfill over many conversations', () => {
  let server: TestServer
  let site: TestSite
  let rx: Receiver
  let t: Tenant
  let agent: string

  const analysedCount = async (version: number) => {
    let n = 0
    let cursor: string | null = null
    do {
      const r: { status: number; text: string; body: any } = await t.api.get(
        `/conversations?agent_id=${agent}&include=analysis&limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      )
      expect(r.status, r.text).toBe(200)
      n += (r.body.data as any[]).filter((c) => c.analysis?.analysis_version === version).length
      cursor = r.body.pagination.next_cursor
    } while (cursor)
    return n
  }
  const events = () => rx.received.filter((x) => x.json?.type === 'conversation.analyzed')

  beforeAll(async () => {
    server = await startServer({
      env: { SVC_RATE_LIMITS: 'read=100000,write=100000,build=100000,calls=100000,chat=100000,backfill=100000' },
    })
    site = await serveSite({ '/': { body: html('Quokka Bakery', '<h1>Quokka Bakery</h1><p>We bake bread.</p>') } })
    rx = await startReceiver()
    t = await createTenant(createApi(server.base, server.masterKey))
    agent = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    const hook = await t.api.post('/webhooks/endpoints', { url: rx.url('/a'), events: ['conversation.analyzed'] })
    expect(hook.status, hook.text).toBe(201)
    const started = Date.now()
    for (let i = 0; i < N; i += 10)
      await Promise.all(
        Array.from({ length: Math.min(10, N - i) }, async (_, j) => {
          const k = i + j
          const r = await t.api.post('/conversations/import', {
            agent_id: agent,
            started_at: ago(3_600_000 + k * 1000),
            summary: { text: 'A question.', outcome: 'resolved' },
            transcript: [
              { speaker: 'agent', text: 'Hello, how can I help?', timestamp: ago(3_600_000 + k * 1000) },
              {
                speaker: 'visitor',
                text: `Please write to guest${k}@example.com today.`,
                timestamp: ago(3_599_000 + k * 1000),
              },
            ],
          })
          expect(r.status, r.text).toBe(201)
        }),
      )
    console.log(`[analysis-backfill] imported ${N} conversations in ${Date.now() - started} ms`)
  }, 600_000)
  afterAll(async () => {
    await server?.stop()
    await site?.close()
    await rx?.close()
  })

  it('analyses each conversation once per version, and a second run adds nothing', async () => {
    verifies('quality.analysis.backfill', 'quality.analysis.event')
    const p = await t.api.patch(`/agents/${agent}`, {
      analysis: { fields: [{ name: 'email', type: 'string', description: 'The e-mail address.' }] },
    })
    expect(p.body.analysis_version).toBe(1)
    const started = Date.now()
    const first = await t.api.post(`/agents/${agent}/analysis/backfill`, {})
    expect(first.status, first.text).toBe(202)
    expect(first.body).toMatchObject({ analysis_version: 1, pending: N })
    await until(
      'every conversation analysed',
      async () => ((await analysedCount(1)) === N ? true : null),
      540_000,
      1_000,
    )
    const ms = Date.now() - started
    console.log(
      `[analysis-backfill] ${N} conversations analysed by one backfill in ${ms} ms (${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'})`,
    )
    await rx.waitFor((r) => r.filter((x) => x.json?.type === 'conversation.analyzed').length >= N, 'N events', 300_000)

    const second = await t.api.post(`/agents/${agent}/analysis/backfill`, {})
    expect(second.status).toBe(202)
    expect(second.body).toMatchObject({ pending: 0 })
    await sleep(3_000)
    expect(await analysedCount(1)).toBe(N)
    const ids = events().map((x) => x.json.data.conversation_id)
    expect(ids).toHaveLength(N)
    expect(new Set(ids).size).toBe(N)
    // Each value is the conversation's own address, sliced from its visitor turn.
    const sample = events()[0].json.data
    expect(sample.analysis.values.email).toMatch(/^guest\d+@example\.com$/)
    expect(sample.analysis.evidence.email).toEqual([
      { turn_index: 1, start: 16, end: 16 + sample.analysis.values.email.length },
    ])
    if (process.env.DATABASE_URL) {
      // Exactly one row per conversation per version, counted in the database itself.
      const rows = await withDatabase(server.dataDir, (db) =>
        db.executeSql(
          `SELECT count(*)::int AS n, count(DISTINCT conversation_id)::int AS d FROM conversation_analyses WHERE agent_id = $1 AND analysis_version = 1`,
          [agent],
        ),
      )
      expect(rows.rows[0]).toEqual({ n: N, d: N })
    }
  }, 600_000)
})
