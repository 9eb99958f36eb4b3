// decisions "Idle conversations" (behaviour) on a server of this file's own (its own PGlite, or its own
// PostgreSQL database: a 10-second idle time on the shared database would abandon the other files'
// chats). SVC_CONVERSATION_IDLE_SECONDS sets the figure, PATCH /admin/config overrides it; an API chat and a
// widget chat left alone become abandoned within 30 s of the idle time, with ended_at their last turn's
// time, one conversation.ended each and a summary; phone and voice-chat conversations, and a chat a turn
// holds, are never touched. On PostgreSQL a second instance sweeps the same database at the same time:
// still one event each.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApi, expectError, type Api } from '../helpers/api'
import { seedAgents } from '../helpers/agents'
import { withDatabase } from '../helpers/db'
import { startReceiver, type Receiver } from '../helpers/receiver'
import { startServer, type TestServer } from '../helpers/server'
import { createTenant, type Tenant } from '../helpers/tenant'
import { sleep, until } from '../helpers/wait'
import { verifies } from '../requirements'
import { conversations } from '~/db/schema'
import type { Database } from '~/db/client'

const ORIGIN = 'https://shop.example.com'
const ENV_IDLE = 3600
const IDLE = 10
const onPostgres = !!process.env.DATABASE_URL
const dbName = `svc_idle_${process.pid}_${Date.now().toString(36)}`
const ownUrl = (() => {
  if (!onPostgres) return undefined
  const url = new URL(process.env.DATABASE_URL!)
  url.pathname = `/${dbName}`
  return url.toString()
})()
const env = {
  DATABASE_URL: ownUrl,
  SVC_CONVERSATION_IDLE_SECONDS: String(ENV_IDLE),
  SVC_JOB_POLL_SECONDS: '0.5',
  // The test polls for the sweep's result several times a second.
  SVC_RATE_LIMITS: 'read=100000,write=100000,chat=100000',
}

let server: TestServer
let second: TestServer | undefined
let master: Api
let api: Api
let t: Tenant
let agentId: string
let rx: Receiver
/**
 * Rows written quiet for two hours (older than the environment's idle time) before the server starts, named
 * by what they prove: voice rows (a call or a browser voice chat left open while it runs; no owner instance,
 * so nothing reconciles them) are never swept; an API chat held by a running turn is not; one whose turn
 * hold lapsed (its instance died) is, with ended_at its start as it has no turn; a soft-deleted one is
 * closed without an event.
 */
const seeded: Record<'phone' | 'voiceChat' | 'held' | 'lapsed' | 'deleted', string> = {} as never

async function seedQuiet(db: Database, accountId: string) {
  const at = (ms: number) => new Date(Date.now() + ms)
  const rows = {
    phone: { channel: 'phone_inbound' },
    voiceChat: { channel: 'voice_chat' },
    held: { channel: 'api', turnLockedUntil: at(3600_000) },
    lapsed: { channel: 'widget', turnLockedUntil: at(-3600_000) },
    deleted: { channel: 'api', deletedAt: at(-60_000), deleteReason: 'api' },
  }
  for (const [name, row] of Object.entries(rows)) {
    const [{ n }] = (await db.executeSql(`SELECT nextval('conversation_seq')::text AS n`)).rows as { n: string }[]
    const id = `conv_p${n}`
    await db.db.insert(conversations).values({
      id,
      accountId,
      agentId,
      agentType: 'chat',
      status: 'in_progress',
      sessionId: `seed_${name}_${n}`,
      startedAt: at(-7200_000),
      updatedAt: at(-7200_000),
      ...row,
    })
    seeded[name as keyof typeof seeded] = id
  }
}

beforeAll(async () => {
  if (ownUrl) await withDatabase('', (db) => db.executeSql(`CREATE DATABASE ${dbName}`))
  rx = await startReceiver()
  const first = await startServer({ env })
  t = await createTenant(createApi(first.base, first.masterKey))
  // Subscribed before the seeded rows exist: the sweep at start-up closes some of them.
  const hook = await t.api.post('/webhooks/endpoints', { url: rx.url('/ended'), events: ['conversation.ended'] })
  expect(hook.status, hook.text).toBe(201)
  await first.stop('SIGTERM')
  // PGlite admits one process: the rows are written while the server is down, then it starts again.
  const on = { url: ownUrl ?? null }
  ;[agentId] = await seedAgents(first.dataDir, [{ accountId: t.accountId, agentType: 'chat' }], on)
  await withDatabase(first.dataDir, (db) => seedQuiet(db, t.accountId), on)
  server = await startServer({ dataDir: first.dataDir, masterKey: first.masterKey, env })
  master = createApi(server.base, server.masterKey)
  api = createApi(server.base, t.key)
  if (ownUrl) second = await startServer({ env, masterKey: server.masterKey })
}, 180_000)
afterAll(async () => {
  await Promise.all([server?.stop(), second?.stop()])
  await rx?.close()
  if (ownUrl)
    await withDatabase('', (db) => db.executeSql(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)).catch(() => {})
})

describe('idle conversations become abandoned', () => {
  it('conversation_idle_seconds: the environment figure, then a validated override (minimum 10) in GET/PATCH /admin/config', async () => {
    verifies('behaviour.idle-abandoned')
    const g = await master.get('/admin/config')
    expect(g.status, g.text).toBe(200)
    expect(g.body).toMatchObject({
      conversation_idle_seconds: ENV_IDLE,
      overrides: { conversation_idle_seconds: null },
    })
    for (const bad of [9, 0, -5, 10.5, 'ten', 2_592_001]) {
      const r = await master.patch('/admin/config', { conversation_idle_seconds: bad })
      expectError(r, 400, 'validation_error', 'conversation_idle_seconds')
    }
    expectError(
      await master.patch('/admin/config', { conversation_idle_seconds: 60, colour: 1 }),
      400,
      'unsupported_field',
    )
    expect((await master.get('/admin/config')).body.overrides.conversation_idle_seconds).toBeNull()
    const p = await master.patch('/admin/config', { conversation_idle_seconds: 900 })
    expect(p.status, p.text).toBe(200)
    expect(p.body).toMatchObject({ conversation_idle_seconds: 900, overrides: { conversation_idle_seconds: 900 } })
    // The environment is checked at boot the same way: a figure outside the range stops the process.
    for (const bad of ['9', 'half an hour'])
      await expect(
        startServer({ env: { ...env, DATABASE_URL: undefined, SVC_CONVERSATION_IDLE_SECONDS: bad } }),
      ).rejects.toThrow(/SVC_CONVERSATION_IDLE_SECONDS is a whole number of seconds from 10 to 2592000/)
    // null removes the override: the environment's figure applies again.
    const cleared = await master.patch('/admin/config', { conversation_idle_seconds: null })
    expect(cleared.body).toMatchObject({
      conversation_idle_seconds: ENV_IDLE,
      overrides: { conversation_idle_seconds: null },
    })
  })

  it('an API chat and a widget chat left alone are abandoned within 30 s of the idle time: ended_at their last turn, one conversation.ended, a summary', async () => {
    verifies('behaviour.idle-abandoned')
    const w = await api.patch(`/agents/${agentId}/widget`, { allowed_domains: ['shop.example.com'] })
    expect(w.status, w.text).toBe(200)
    const publicToken = (await api.get(`/agents/${agentId}/widget`)).body.public_token as string
    expect(publicToken).toMatch(/./)

    const p = await master.patch('/admin/config', { conversation_idle_seconds: IDLE })
    expect(p.status, p.text).toBe(200)
    expect(p.body.conversation_idle_seconds).toBe(IDLE)
    // The second instance learns the figure from its poll (every 5 s).
    if (second)
      await until('the second instance applies the override', async () => {
        const r = await createApi(second!.base, second!.masterKey).get('/admin/config')
        return r.body.conversation_idle_seconds === IDLE
      })

    const c = await api.post('/conversations', { agent_id: agentId, send_greeting: true })
    expect(c.status, c.text).toBe(201)
    const apiConv = c.body.conversation_id as string
    expect((await api.post(`/conversations/${apiConv}/messages`, { text: 'Hello, what do you sell?' })).status).toBe(
      200,
    )

    const widgetHeaders = {
      origin: ORIGIN,
      'x-svc-widget-token': publicToken,
      'content-type': 'application/json',
    }
    const wc = await fetch(`${server.base}/widget/conversations`, {
      method: 'POST',
      headers: widgetHeaders,
      body: '{}',
    })
    expect(wc.status).toBe(201)
    const { conversation_id: widgetConv, visitor_token } = (await wc.json()) as Record<string, string>
    const wm = await fetch(`${server.base}/widget/conversations/${widgetConv}/messages`, {
      method: 'POST',
      headers: { ...widgetHeaders, 'x-svc-visitor-token': visitor_token },
      body: JSON.stringify({ text: 'Do you deliver?' }),
    })
    expect(wm.status).toBe(200)

    const abandonedAt: Record<string, number> = {}
    await until(
      'both chats abandoned',
      async () => {
        const r = await api.get('/conversations?status=abandoned&include=metrics')
        expect(r.status, r.text).toBe(200)
        for (const x of r.body.data) abandonedAt[x.conversation_id] ??= Date.now()
        // By id: the seeded lapsed chat is abandoned by a sweep too, and that sweep may come late.
        return apiConv in abandonedAt && widgetConv in abandonedAt
      },
      IDLE * 1000 + 35_000,
      250,
    )
    for (const id of [apiConv, widgetConv]) {
      const r = await api.get(`/conversations/${id}?include=transcript`)
      expect(r.body.status).toBe('abandoned')
      const last = r.body.transcript.at(-1)
      expect(last.speaker).toBe('agent')
      expect(r.body.ended_at).toBe(last.timestamp)
      const quiet = abandonedAt[id] - Date.parse(last.timestamp)
      expect(quiet, id).toBeGreaterThanOrEqual(IDLE * 1000)
      expect(quiet, id).toBeLessThan(IDLE * 1000 + 30_000)
      console.log(`[idle] ${id} abandoned ${quiet - IDLE * 1000} ms after its idle time`)
    }
    const refused = await api.post(`/conversations/${apiConv}/messages`, { text: 'Still there?' })
    expectError(refused, 409, 'conversation_ended')

    for (const id of [apiConv, widgetConv]) {
      const summary = await until(`summary of ${id}`, async () => {
        const r = await api.get(`/conversations/${id}/summary`)
        return r.body.summary_status === 'ready' && r.body.summary
      })
      // Left by the visitor, with nothing stronger reached: the outcome says so.
      expect(summary.outcome, id).toBe('abandoned')
      expect((await api.get(`/conversations/${id}`)).body.outcome).toBe('abandoned')
    }
    const listed = await api.get('/conversations?status=abandoned&channel=api&channel=widget')
    expect(listed.body.data.map((x: any) => x.conversation_id).sort()).toEqual(
      [apiConv, widgetConv, seeded.lapsed].sort(),
    )

    const endedOf = (id: string) => rx.at('/ended').filter((x) => x.json?.data?.conversation_id === id)
    await rx.waitFor(() => endedOf(apiConv).length > 0 && endedOf(widgetConv).length > 0, 'both conversation.ended')
    // Let more sweeps run (on PostgreSQL, of both instances): still one event each.
    await sleep(12_000)
    for (const id of [apiConv, widgetConv]) {
      const got = endedOf(id)
      expect(got, id).toHaveLength(1)
      expect(got[0].json).toMatchObject({ type: 'conversation.ended', data: { status: 'abandoned' } })
      expect(got[0].json.data.ended_at).toBe(got[0].json.data.transcript.at(-1).timestamp)
    }
  }, 120_000)

  it('never sweeps voice channels nor a chat a turn holds; a lapsed hold is swept (ended_at its start without turns); a deleted chat closes without an event', async () => {
    verifies('behaviour.idle-abandoned')
    // Many sweeps have run by now (the chats above were closed by one).
    for (const name of ['phone', 'voiceChat', 'held'] as const) {
      const r = await api.get(`/conversations/${seeded[name]}`)
      expect(r.body, name).toMatchObject({ status: 'in_progress', ended_at: null })
    }
    const lapsed = await api.get(`/conversations/${seeded.lapsed}`)
    expect(lapsed.body).toMatchObject({ status: 'abandoned', ended_at: lapsed.body.started_at, turn_count: 0 })
    const endedOf = (id: string) => rx.at('/ended').filter((x) => x.json?.data?.conversation_id === id)
    await rx.waitFor(() => endedOf(seeded.lapsed).length > 0, 'conversation.ended of the lapsed chat')
    expect(endedOf(seeded.lapsed)).toHaveLength(1)
    expect((await api.get(`/conversations/${seeded.deleted}`)).status).toBe(410)
    expect(endedOf(seeded.deleted)).toHaveLength(0)
    for (const name of ['phone', 'voiceChat', 'held'] as const) expect(endedOf(seeded[name]), name).toHaveLength(0)
  })
})
