// On a server of its own, with state written straight into the database between restarts (the only way
// to stand in for another instance on PGlite): a turn claim held by another instance (turn_locked_until in
// the future) answers 409 turn_in_progress, and an expired claim (a crashed instance) is taken over; a
// starter account whose wallet is empty and whose month's spending reached the plan limit is 402; the
// chat_messages quota used up is 429; ending twice writes conversation.ended once, and summary.ready once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eq, sql } from 'drizzle-orm'
import { createApi, err } from '../helpers/api'
import { seedAgent } from '../helpers/agents'
import { withDatabase } from '../helpers/db'
import { startServer, type TestServer } from '../helpers/server'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'
import { conversations, events, messageKeys, quotaUsage, subscriptions, usageRecords } from '~/db/schema'
import { utcDay } from '~/domain/limits/quotas'
import { until } from '../helpers/wait'

const env = { SVC_RATE_LIMITS: 'read=100000,write=100000,chat=100000,calls=100000' }
let server: TestServer
let t: Tenant
let poor: Tenant
let agentId: string
let poorAgent: string
let convId: string

/**
 * Writes (or reads) `fn` in the server's database as another instance would. On PGlite the server owns its
 * database, so it is stopped around `fn` and started again; on PostgreSQL `fn` runs beside the running server
 * (what another instance does), saving a restart, unless `sweep`: the test needs the sweeps a start runs.
 */
async function restartWith(
  fn: (db: Awaited<Parameters<Parameters<typeof withDatabase>[1]>[0]>) => Promise<void>,
  opts: { sweep?: boolean } = {},
) {
  if (process.env.DATABASE_URL && !opts.sweep) {
    await withDatabase(server.dataDir, fn)
    return createApi(server.base, t.key)
  }
  await server.stop('SIGTERM')
  await withDatabase(server.dataDir, fn)
  server = await startServer({ dataDir: server.dataDir, masterKey: server.masterKey, env })
  return createApi(server.base, t.key)
}

beforeAll(async () => {
  server = await startServer({ env })
  const m = createApi(server.base, server.masterKey)
  t = await createTenant(m)
  poor = await createTenant(m, { plan: 'starter' })
  const seeded = await seedAgent(server, [{ accountId: t.accountId }, { accountId: poor.accountId }], env)
  server = seeded.server
  ;[agentId, poorAgent] = seeded.ids
  const c = await createApi(server.base, t.key).post('/conversations', { agent_id: agentId, send_greeting: true })
  expect(c.status).toBe(201)
  convId = c.body.conversation_id
}, 60_000)
afterAll(async () => {
  await server?.stop('SIGKILL')
})

describe('turn claim in the database', () => {
  it('a claim held elsewhere is 409 turn_in_progress; an expired one is taken over', async () => {
    verifies('conversations.messages')
    let api = await restartWith(async (db) => {
      await db.db
        .update(conversations)
        .set({ turnLockedUntil: sql`now() + interval '60 seconds'` })
        .where(eq(conversations.id, convId))
    })
    const r = await api.post(`/conversations/${convId}/messages`, { text: 'Hello, what do you sell?' })
    expect(r.status).toBe(409)
    expect(err(r).code).toBe('turn_in_progress')
    api = await restartWith(async (db) => {
      await db.db
        .update(conversations)
        .set({ turnLockedUntil: sql`now() - interval '1 second'` })
        .where(eq(conversations.id, convId))
    })
    const ok = await api.post(`/conversations/${convId}/messages`, { text: 'Hello, what do you sell?' })
    expect(ok.status).toBe(200)
    expect(ok.body.turn).toMatchObject({ turn_index: 2, turn_type: 'answer' })
  }, 60_000)

  it("402 when the wallet is empty and the month's spending reached the plan limit", async () => {
    verifies('conversations.billing', 'outbound.calls-billing')
    await restartWith(async (db) => {
      await db.db.update(subscriptions).set({ walletBalance: 0 }).where(eq(subscriptions.accountId, poor.accountId))
      await db.db.insert(usageRecords).values({
        accountId: poor.accountId,
        channel: 'api',
        sessionId: 'api_spent',
        startedAt: new Date(),
        tokens: 1,
        costUsd: 49,
      })
    })
    const api = createApi(server.base, poor.key)
    const r = await api.post('/conversations', { agent_id: poorAgent })
    expect(r.status).toBe(402)
    expect(err(r).code).toBe('payment_required')
    // An outbound call is refused the same way, before anything is dialled or written.
    const call = await api.post('/calls', { agent_id: poorAgent, to: '+14155550123', role: 'a caller' })
    expect(call.status, call.text).toBe(402)
    expect(err(call).code).toBe('payment_required')
    expect((await api.get('/calls')).body.data).toEqual([])
    // The tenant with a plan allowance left is unaffected.
    expect((await createApi(server.base, t.key).post('/conversations', { agent_id: agentId })).status).toBe(201)
  }, 60_000)

  it('the daily chat_messages quota used up is 429 quota_exceeded, and a refused message writes no turn', async () => {
    verifies('conversations.billing')
    const api = await restartWith(async (db) => {
      await db.db
        .insert(quotaUsage)
        .values({ accountId: t.accountId, day: utcDay(), kind: 'chat_messages', used: 5000 })
        .onConflictDoUpdate({ target: [quotaUsage.accountId, quotaUsage.day, quotaUsage.kind], set: { used: 5000 } })
    })
    const r = await api.post(`/conversations/${convId}/messages`, { text: 'How are you?' })
    expect(r.status).toBe(429)
    expect(err(r).code).toBe('quota_exceeded')
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
    // The claim was released: once the quota allows, the next message runs.
    const again = await restartWith(async (db) => {
      // The refused claim took no unit (the quota is taken in the claim's own statement).
      const [q] = await db.db.select().from(quotaUsage).where(eq(quotaUsage.accountId, t.accountId))
      expect(q.used).toBe(5000)
      await db.db.update(quotaUsage).set({ used: 0 }).where(eq(quotaUsage.accountId, t.accountId))
    })
    const ok = await again.post(`/conversations/${convId}/messages`, { text: 'How are you?' })
    expect(ok.status).toBe(200)
    expect(ok.body.turn.turn_index).toBe(4)
  }, 60_000)

  it('a hold left by a dead instance gives its unit back once it lapses; a live hold is kept', async () => {
    verifies('conversations.turn-holds')
    let api = createApi(server.base, t.key)
    const open = async () => (await api.post('/conversations', { agent_id: agentId })).body.conversation_id as string
    const dead = await open()
    const live = await open()
    const used = async () => (await api.get(`/accounts/${t.accountId}/limits`)).body.quotas.chat_messages.used as number
    const before = await used()
    // What two claims of an instance that then died left: each a hold and the unit it took; one has lapsed.
    api = await restartWith(
      async (db) => {
        await db.db
          .update(conversations)
          .set({ turnLockedUntil: sql`now() - interval '1 second'` })
          .where(eq(conversations.id, dead))
        await db.db
          .update(conversations)
          .set({ turnLockedUntil: sql`now() + interval '60 seconds'` })
          .where(eq(conversations.id, live))
        await db.db
          .insert(quotaUsage)
          .values({ accountId: t.accountId, day: utcDay(), kind: 'chat_messages', used: before + 2 })
          .onConflictDoUpdate({
            target: [quotaUsage.accountId, quotaUsage.day, quotaUsage.kind],
            set: { used: before + 2 },
          })
      },
      { sweep: true },
    )
    // The sweep at start gives the lapsed hold's unit back, not the live one's.
    await until('the lapsed unit given back', async () => (await used()) === before + 1, 20_000)
    const held = await api.post(`/conversations/${live}/messages`, { text: 'Hello?' })
    expect(held.status).toBe(409)
    expect(err(held).code).toBe('turn_in_progress')
    const ok = await api.post(`/conversations/${dead}/messages`, { text: 'Hello, what do you sell?' })
    expect(ok.status).toBe(200)
    // The freed conversation's turn took a unit of its own: the counter is the live hold's and this turn's.
    expect(await used()).toBe(before + 2)
    await restartWith(async (db) => {
      const [row] = await db.db.select().from(conversations).where(eq(conversations.id, dead))
      expect(row.turnLockedUntil).toBeNull()
    })
  }, 60_000)

  it('end twice: one conversation.ended; the summary job writes one summary.ready; the events carry the payload', async () => {
    verifies('conversations.end')
    const api = createApi(server.base, t.key)
    const first = await api.post(`/conversations/${convId}/end`, {})
    expect(first.status).toBe(200)
    const second = await api.post(`/conversations/${convId}/end`)
    expect(second.status).toBe(200)
    expect(second.body.ended_at).toBe(first.body.ended_at)
    await until(
      'the summary',
      async () => (await api.post(`/conversations/${convId}/end`)).body.summary_status === 'ready',
      20_000,
    )
    const get = (await api.get(`/conversations/${convId}`)).body
    const { meta: _meta, ...resource } = get
    await restartWith(async (db) => {
      const rows = await db.db.select().from(events).where(eq(events.accountId, t.accountId))
      const mine = rows.filter((e) => (e.payload.data as { conversation_id?: string }).conversation_id === convId)
      expect(mine.map((e) => e.type).sort()).toEqual(['conversation.ended', 'conversation.started', 'summary.ready'])
      for (const e of mine) {
        expect(e.id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/)
        expect(e.payload).toMatchObject({
          id: e.id,
          type: e.type,
          api_version: 'v1',
          account_id: t.accountId,
          created_at: expect.any(String),
        })
      }
      const ready = mine.find((e) => e.type === 'summary.ready')!
      expect((ready.payload.data as { summary: { outcome: string } }).summary.outcome).toMatch(
        /^(resolved|unresolved)$/,
      )
      // decisions "Events": data is the resource as its GET shows it — nothing changed after the summary.
      expect(ready.payload.data).toEqual(resource)
      const data = (type: string) => mine.find((e) => e.type === type)!.payload.data as Record<string, any>
      for (const type of ['conversation.started', 'conversation.ended'])
        expect(Object.keys(data(type)).sort()).toEqual(Object.keys(resource).sort())
      expect(data('conversation.started')).toMatchObject({
        status: 'in_progress',
        ended_at: null,
        summary_status: 'pending',
        turn_count: 1,
        transcript: [resource.transcript[0]],
      })
      const { summary: _s, summary_status: _ss, outcome: _o, updated_at: _u, ...atEnd } = resource
      expect(data('conversation.ended')).toMatchObject({ ...atEnd, summary_status: 'pending', summary: null })
    })
  }, 60_000)

  it('the message-keys sweep deletes keys older than 24 hours; a live key still replays', async () => {
    verifies('conversations.idempotency')
    let api = createApi(server.base, t.key)
    const c = await api.post('/conversations', { agent_id: agentId })
    const id = c.body.conversation_id as string
    const first = await api.post(`/conversations/${id}/messages`, {
      text: 'What do you sell?',
      idempotency_key: 'live-key',
    })
    expect(first.status).toBe(200)
    const old = await api.post(`/conversations/${id}/messages`, { text: 'Where are you?', idempotency_key: 'old-key' })
    expect(old.status).toBe(200)
    // Restarting runs the sweep (at start and hourly); old-key is made 25 hours old first.
    api = await restartWith(
      async (db) => {
        await db.db
          .update(messageKeys)
          .set({ createdAt: sql`now() - interval '25 hours'` })
          .where(eq(messageKeys.key, 'old-key'))
      },
      { sweep: true },
    )
    const replay = await api.post(`/conversations/${id}/messages`, {
      text: 'What do you sell?',
      idempotency_key: 'live-key',
    })
    expect(replay.status).toBe(200)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    const { meta: _m1, ...stored } = first.body
    const { meta: _m2, ...replayed } = replay.body
    expect(replayed).toEqual(stored)
    let keys: string[] = []
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 1000))
      await restartWith(async (db) => {
        keys = (
          await db.db.select({ key: messageKeys.key }).from(messageKeys).where(eq(messageKeys.conversationId, id))
        ).map((k) => k.key)
      })
      if (!keys.includes('old-key')) break
    }
    expect(keys).toEqual(['live-key'])
  }, 90_000)
})
