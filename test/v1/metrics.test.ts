// Conversation metrics on a server of its own: conversations, turns and usage rows are seeded straight
// into the database (the chat runtime is not needed), then GET /metrics/conversations and GET /metrics
// are checked against figures worked out by hand, including percentile_cont latencies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eq } from 'drizzle-orm'
import { createApi, err, type Api } from '../helpers/api'
import { seedAgents } from '../helpers/agents'
import { withDatabase } from '../helpers/db'
import { startServer, type TestServer } from '../helpers/server'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'
import { agentVersions, conversations, turns, usageRecords } from '~/db/schema'

const env = { SVC_RATE_LIMITS: 'read=100000,write=100000,metrics=100000' }
const DAY = 86_400_000
let server: TestServer
let t: Tenant
let other: Tenant
let api: Api
let otherApi: Api
let master: Api
let agentsOnly: Api
let a1: string, a2: string, b1: string
let a1v1: string, a2v1: string
const a1v2 = () => `agt${a1.slice(4)}-v2`

// D0 is a UTC midnight five days ago, D1 the day after: both inside the default 30-day window.
const D0 = new Date(Math.floor((Date.now() - 5 * DAY) / DAY) * DAY)
const at = (base: Date, hours: number) => new Date(base.getTime() + hours * 3_600_000)
const D1 = at(D0, 24)
const iso = (d: Date) => d.toISOString()
const day = (d: Date) => iso(d).slice(0, 10)

interface Conv {
  id: string
  account: string
  agent: string
  version: string
  channel: string
  started: Date
  status: string
  outcome: string | null
  escalated?: boolean
  deleted?: boolean
  answers?: { latency: number; unanswered?: boolean }[]
}

beforeAll(async () => {
  server = await startServer({ env })
  const m = createApi(server.base, server.masterKey)
  t = await createTenant(m)
  other = await createTenant(m)
  const ro = await m.post(`/users/${t.userId}/credentials`, { scopes: ['agents:read'] })
  await server.stop('SIGTERM')
  ;[a1, a2, b1] = await seedAgents(server.dataDir, [
    { accountId: t.accountId, name: 'One' },
    { accountId: t.accountId, name: 'Two', agentType: 'phone' },
    { accountId: other.accountId },
  ])
  await withDatabase(server.dataDir, async (db) => {
    const versionOf = async (agent: string) =>
      (await db.db.select().from(agentVersions).where(eq(agentVersions.agentId, agent)))[0].agentVersion
    a1v1 = await versionOf(a1)
    a2v1 = await versionOf(a2)
    const b1v1 = await versionOf(b1)
    // Deploy markers: one for a1 inside the window, one long before it.
    await db.db.insert(agentVersions).values([
      {
        agentId: a1,
        accountId: t.accountId,
        agentVersion: a1v2(),
        promptVersion: 'p-2',
        reason: 'patch',
        changed: ['temperature'],
        deployedAt: at(D0, 12),
      },
      {
        agentId: a1,
        accountId: t.accountId,
        agentVersion: `agt${a1.slice(4)}-v0`,
        promptVersion: null,
        reason: 'patch',
        changed: [],
        deployedAt: new Date(D0.getTime() - 90 * DAY),
      },
    ])
    const convs: Conv[] = [
      // c1: ten answers 100..1000 ms, two unanswered.
      {
        id: 'conv_p900001',
        account: t.accountId,
        agent: a1,
        version: a1v1,
        channel: 'api',
        started: at(D0, 1),
        status: 'completed',
        outcome: 'resolved',
        answers: Array.from({ length: 10 }, (_, i) => ({ latency: (i + 1) * 100, unanswered: i < 2 })),
      },
      {
        id: 'conv_p900002',
        account: t.accountId,
        agent: a1,
        version: a1v2(),
        channel: 'widget',
        started: at(D1, 1),
        status: 'completed',
        outcome: 'lead_captured',
        escalated: true,
        answers: [{ latency: 2000 }, { latency: 3000 }],
      },
      {
        id: 'conv_p900003',
        account: t.accountId,
        agent: a2,
        version: a2v1,
        channel: 'api',
        started: at(D1, 2),
        status: 'in_progress',
        outcome: null,
      },
      {
        id: 'conv_u900004',
        account: t.accountId,
        agent: a2,
        version: a2v1,
        channel: 'phone_inbound',
        started: at(D0, 3),
        status: 'completed',
        outcome: 'transferred',
        answers: [{ latency: 400, unanswered: true }],
      },
      // Soft-deleted: never counted (its usage row is still billed).
      {
        id: 'conv_p900005',
        account: t.accountId,
        agent: a1,
        version: a1v1,
        channel: 'api',
        started: at(D0, 4),
        status: 'completed',
        outcome: 'resolved',
        deleted: true,
        answers: Array.from({ length: 5 }, () => ({ latency: 9000, unanswered: true })),
      },
      // Forty days before D0: outside the default window.
      {
        id: 'conv_p900006',
        account: t.accountId,
        agent: a1,
        version: a1v1,
        channel: 'api',
        started: new Date(D0.getTime() - 40 * DAY),
        status: 'completed',
        outcome: 'unresolved',
        answers: [{ latency: 50 }],
      },
      // Another account's conversation: never seen by t.
      {
        id: 'conv_p900007',
        account: other.accountId,
        agent: b1,
        version: b1v1,
        channel: 'api',
        started: at(D0, 1),
        status: 'completed',
        outcome: 'failed',
        answers: [{ latency: 7777, unanswered: true }],
      },
    ]
    for (const c of convs) {
      await db.db.insert(conversations).values({
        id: c.id,
        accountId: c.account,
        agentId: c.agent,
        agentType: c.channel === 'phone_inbound' ? 'phone' : 'chat',
        channel: c.channel,
        status: c.status,
        sessionId: `ses-${c.id}`,
        agentVersion: c.version,
        startedAt: c.started,
        endedAt: c.status === 'completed' ? at(c.started, 1) : null,
        outcome: c.outcome,
        escalated: !!c.escalated,
        deletedAt: c.deleted ? at(c.started, 2) : null,
        deleteReason: c.deleted ? 'api' : null,
      })
      const rows: (typeof turns.$inferInsert)[] = [
        // A greeting with a latency and a visitor message: neither is an answer turn.
        {
          conversationId: c.id,
          turnIndex: 0,
          speaker: 'agent',
          turnType: 'greeting',
          text: 'Hi',
          timestamp: c.started,
          latencyMs: 60_000,
        },
        {
          conversationId: c.id,
          turnIndex: 1,
          speaker: 'visitor',
          turnType: 'message',
          text: 'Q',
          timestamp: c.started,
          latencyMs: 60_000,
          unanswered: true,
        },
      ]
      for (const [i, a] of (c.answers ?? []).entries()) {
        rows.push({
          conversationId: c.id,
          turnIndex: i + 2,
          speaker: 'agent',
          turnType: 'answer',
          text: 'A',
          timestamp: c.started,
          latencyMs: a.latency,
          unanswered: !!a.unanswered,
        })
      }
      await db.db.insert(turns).values(rows)
    }
    const usage = (
      c: string,
      account: string,
      agent: string,
      channel: string,
      started: Date,
      tokens: number,
      costUsd: number,
      telephonySeconds: number | null = null,
    ) => ({
      accountId: account,
      agentId: agent,
      agentType: 'chat',
      channel,
      sessionId: `ses-${c}`,
      startedAt: started,
      endedAt: at(started, 1),
      telephonySeconds,
      tokens,
      costUsd,
    })
    await db.db
      .insert(usageRecords)
      .values([
        usage('conv_p900001', t.accountId, a1, 'api', at(D0, 1), 100, 0.01),
        usage('conv_p900002', t.accountId, a1, 'widget', at(D1, 1), 50, 0.02),
        usage('conv_u900004', t.accountId, a2, 'phone_inbound', at(D0, 3), 30, 0.5, 120),
        usage('conv_p900005', t.accountId, a1, 'api', at(D0, 4), 1000, 1),
        usage('conv_p900007', other.accountId, b1, 'api', at(D0, 1), 9999, 9),
      ])
  })
  server = await startServer({ dataDir: server.dataDir, masterKey: server.masterKey, env })
  api = createApi(server.base, t.key)
  otherApi = createApi(server.base, other.key)
  master = createApi(server.base, server.masterKey)
  agentsOnly = createApi(server.base, ro.body.secret)
})
afterAll(async () => {
  await server?.stop('SIGKILL')
})

const zeroOutcomes = {
  resolved: 0,
  unresolved: 0,
  lead_captured: 0,
  ticket_created: 0,
  order_placed: 0,
  transferred: 0,
  escalated: 0,
  abandoned: 0,
  voicemail: 0,
  no_answer: 0,
  failed: 0,
}

// Latencies of the four counted conversations: 100..1000, 2000, 3000 and 400 (13 values).
const TOTALS = {
  conversations: 4,
  completed: 3,
  outcomes: { ...zeroOutcomes, resolved: 1, lead_captured: 1, transferred: 1 },
  without_outcome: 1,
  escalated: 1,
  answers: 13,
  unanswered: 3,
  unanswered_rate: 0.2308,
  latency_ms: { p50: 600, p90: 1800, p99: 2880 },
  tokens: 180,
}

describe('GET /metrics/conversations', () => {
  it('defaults to the last 30 days grouped by UTC day, with exact counts, outcomes, unanswered rate and latency percentiles', async () => {
    verifies('metrics.conversations')
    const r = await api.get('/metrics/conversations')
    expect(r.status).toBe(200)
    expect(r.headers.get('ratelimit-policy')).toContain('"metrics"')
    expect(r.body.meta).toMatchObject({ group_by: 'day', applied_default_range: true })
    expect(Date.parse(r.body.meta.to) - Date.parse(r.body.meta.from)).toBe(30 * DAY)
    expect(r.body.totals).toEqual(TOTALS)
    expect(r.body.markers).toEqual([])
    expect(r.body.data.map((g: any) => [g.day, g.conversations])).toEqual([
      [day(D0), 2],
      [day(D1), 2],
    ])
    const d0 = r.body.data[0]
    expect(d0).toEqual({
      day: day(D0),
      conversations: 2,
      completed: 2,
      outcomes: { ...zeroOutcomes, resolved: 1, transferred: 1 },
      without_outcome: 0,
      escalated: 0,
      answers: 11,
      unanswered: 3,
      unanswered_rate: 0.2727,
      latency_ms: { p50: 500, p90: 900, p99: 990 },
      tokens: 130,
    })
  })

  it('groups by agent: per-agent figures and the deploy markers of the window', async () => {
    verifies('metrics.conversations')
    const r = await api.get('/metrics/conversations?group_by=agent')
    expect(r.status).toBe(200)
    expect(r.body.meta.group_by).toBe('agent')
    const byAgent = Object.fromEntries(r.body.data.map((g: any) => [g.agent_id, g]))
    expect(Object.keys(byAgent).sort()).toEqual([a1, a2].sort())
    expect(byAgent[a1]).toMatchObject({
      conversations: 2,
      completed: 2,
      escalated: 1,
      answers: 12,
      unanswered: 2,
      unanswered_rate: 0.1667,
      latency_ms: { p50: 650 },
      tokens: 150,
    })
    expect(byAgent[a1]).not.toHaveProperty('day')
    expect(byAgent[a2]).toMatchObject({
      conversations: 2,
      completed: 1,
      without_outcome: 1,
      answers: 1,
      unanswered: 1,
      unanswered_rate: 1,
      latency_ms: { p50: 400, p90: 400, p99: 400 },
      tokens: 30,
    })
    expect(r.body.totals).toEqual(TOTALS)
    // Markers: the in-window patch of a1 and both build markers (seeded now); not the 90-day-old one, not b1's.
    const markers = r.body.markers.map((m: any) => `${m.agent_id}:${m.agent_version}:${m.reason}`)
    expect(markers[0]).toBe(`${a1}:${a1v2()}:patch`)
    expect(markers.slice(1).sort()).toEqual([`${a1}:${a1v1}:build`, `${a2}:${a2v1}:build`].sort())
    expect(r.body.markers[0]).toEqual({
      agent_id: a1,
      agent_version: a1v2(),
      prompt_version: 'p-2',
      reason: 'patch',
      deployed_at: iso(at(D0, 12)),
    })
  })

  it('groups by agent_version: percentiles of known latencies (100..1000 ms gives p50 550, p90 910, p99 991)', async () => {
    verifies('metrics.conversations')
    const r = await api.get(`/metrics/conversations?group_by=agent_version&agent_id=${a1}`)
    expect(r.status).toBe(200)
    expect(r.body.data.map((g: any) => [g.agent_id, g.agent_version, g.conversations])).toEqual(
      [
        [a1, a1v1, 1],
        [a1, a1v2(), 1],
      ].sort((x, y) => String(x[1]).localeCompare(String(y[1]))),
    )
    const v1 = r.body.data.find((g: any) => g.agent_version === a1v1)
    expect(v1).toMatchObject({
      answers: 10,
      unanswered: 2,
      unanswered_rate: 0.2,
      latency_ms: { p50: 550, p90: 910, p99: 991 },
      outcomes: { ...zeroOutcomes, resolved: 1 },
      tokens: 100,
    })
    const v2 = r.body.data.find((g: any) => g.agent_version === a1v2())
    expect(v2).toMatchObject({
      answers: 2,
      unanswered: 0,
      unanswered_rate: 0,
      latency_ms: { p50: 2500, p90: 2900, p99: 2990 },
      escalated: 1,
      tokens: 50,
    })
    // The agent filter also narrows the markers.
    expect(r.body.markers.every((m: any) => m.agent_id === a1)).toBe(true)
    expect(r.body.markers.map((m: any) => m.agent_version).sort()).toEqual([a1v1, a1v2()].sort())
    expect(r.body.totals.conversations).toBe(2)
  })

  it('filters by window (explicit from/to, [from, to)), channel and agent; soft-deleted conversations never count', async () => {
    verifies('metrics.conversations')
    const one = await api.get(`/metrics/conversations?from=${iso(D0)}&to=${iso(D1)}`)
    expect(one.status).toBe(200)
    expect(one.body.meta).toEqual(
      expect.objectContaining({ from: iso(D0), to: iso(D1), applied_default_range: false, group_by: 'day' }),
    )
    expect(one.body.totals).toMatchObject({ conversations: 2, answers: 11, unanswered: 3 })
    const wide = await api.get(`/metrics/conversations?from=${iso(new Date(D0.getTime() - 41 * DAY))}&to=${iso(D1)}`)
    expect(wide.body.totals).toMatchObject({
      conversations: 3,
      outcomes: { ...zeroOutcomes, resolved: 1, transferred: 1, unresolved: 1 },
    })
    expect(wide.body.data).toHaveLength(2)
    const onlyFrom = await api.get(`/metrics/conversations?from=${iso(D1)}`)
    expect(onlyFrom.body.totals.conversations).toBe(2)
    expect(onlyFrom.body.meta.applied_default_range).toBe(false)
    const channels = await api.get('/metrics/conversations?channel=api&channel=widget')
    expect(channels.body.totals).toMatchObject({ conversations: 3, answers: 12 })
    const phone = await api.get('/metrics/conversations?channel=phone_inbound')
    expect(phone.body.totals).toMatchObject({ conversations: 1, tokens: 30 })
    const agent2 = await api.get(`/metrics/conversations?agent_id=${a2}&group_by=agent`)
    expect(agent2.body.data.map((g: any) => g.agent_id)).toEqual([a2])
    const none = await api.get(
      `/metrics/conversations?from=${iso(new Date(D0.getTime() - 20 * DAY))}&to=${iso(new Date(D0.getTime() - 10 * DAY))}`,
    )
    expect(none.body.data).toEqual([])
    expect(none.body.totals).toEqual({
      ...TOTALS,
      conversations: 0,
      completed: 0,
      outcomes: zeroOutcomes,
      without_outcome: 0,
      escalated: 0,
      answers: 0,
      unanswered: 0,
      unanswered_rate: null,
      latency_ms: { p50: null, p90: null, p99: null },
      tokens: 0,
    })
  })

  it('never counts another account: each tenant sees only its own conversations; the master key acts through X-Svc-Account', async () => {
    verifies('metrics.conversations')
    const o = await otherApi.get('/metrics/conversations?group_by=agent')
    expect(o.body.totals).toMatchObject({
      conversations: 1,
      outcomes: { ...zeroOutcomes, failed: 1 },
      answers: 1,
      latency_ms: { p50: 7777 },
      tokens: 9999,
    })
    expect(o.body.data.map((g: any) => g.agent_id)).toEqual([b1])
    expect(o.body.markers.every((m: any) => m.agent_id === b1)).toBe(true)
    // Another account's agent as a filter matches nothing.
    const foreign = await api.get(`/metrics/conversations?agent_id=${b1}`)
    expect(foreign.status).toBe(200)
    expect(foreign.body.totals.conversations).toBe(0)
    const m = await master.get('/metrics/conversations', { headers: { 'x-svc-account': t.accountId } })
    expect(m.status).toBe(200)
    expect(m.body.totals).toEqual(TOTALS)
    expect(err(await api.get(`/metrics/conversations?account_id=${other.accountId}`)).code).toBe('forbidden_account')
  })
})

describe('GET /metrics', () => {
  it('answers one overview object: conversation figures, active agents and the billed usage of the window', async () => {
    verifies('metrics.summary')
    const r = await api.get('/metrics')
    expect(r.status).toBe(200)
    expect(r.headers.get('ratelimit-policy')).toContain('"metrics"')
    const { meta, ...overview } = r.body
    expect(meta).toMatchObject({ applied_default_range: true })
    expect(overview).toEqual({
      ...TOTALS,
      active_agents: 2,
      // Billed usage counts every billed session of the window, a since-deleted conversation's too.
      tokens: 1180,
      cost_usd: 1.53,
      voice_seconds: 120,
      billed_sessions: 4,
      // Browser-side widget events (issue 17; test/v1/widget-public.test.ts counts some): none here.
      widget_events: {
        totals: { 'widget.loaded': 0, 'widget.opened': 0, 'widget.closed': 0, 'message.shown': 0, 'link.clicked': 0 },
        agents: [],
      },
    })
    const phone = await api.get('/metrics?channel=phone_inbound')
    expect(phone.body).toMatchObject({
      conversations: 1,
      active_agents: 1,
      tokens: 30,
      voice_seconds: 120,
      cost_usd: 0.5,
    })
    const o = await otherApi.get('/metrics')
    expect(o.body).toMatchObject({ conversations: 1, active_agents: 1, tokens: 9999, cost_usd: 9 })
    const empty = await api.get(
      `/metrics?from=${iso(new Date(D0.getTime() - 20 * DAY))}&to=${iso(new Date(D0.getTime() - 10 * DAY))}`,
    )
    expect(empty.body).toMatchObject({
      conversations: 0,
      active_agents: 0,
      tokens: 0,
      cost_usd: 0,
      unanswered_rate: null,
      latency_ms: { p50: null, p90: null, p99: null },
    })
  })
})

describe('errors', () => {
  const routes = [
    ['/metrics/conversations', () => verifies('metrics.conversations')],
    ['/metrics', () => verifies('metrics.summary')],
  ] as const
  for (const [path, cite] of routes) {
    it(`${path}: invalid_date, invalid_date_range, unsupported_filter, invalid_id, insufficient_scope, forbidden_account`, async () => {
      cite()
      const code = async (q: string, who: Api = api, headers?: Record<string, string>) => {
        const r = await who.get(path + q, { headers })
        return [r.status, err(r)?.code, err(r)?.field]
      }
      expect(await code('?from=yesterday')).toEqual([400, 'invalid_date', 'from'])
      expect(await code('?to=2026-02-30T00:00:00Z')).toEqual([400, 'invalid_date', 'to'])
      expect(await code(`?from=${iso(D1)}&to=${iso(D0)}`)).toEqual([400, 'invalid_date_range', 'from'])
      expect(await code(`?from=${iso(D0)}&to=${iso(D0)}`)).toEqual([400, 'invalid_date_range', 'from'])
      expect(await code(`?from=2024-01-01T00:00:00Z&to=2025-06-01T00:00:00Z`)).toEqual([
        400,
        'invalid_date_range',
        'from',
      ])
      expect((await code('?channel=fax'))[1]).toBe('unsupported_filter')
      expect(await code('?sort=day')).toEqual([400, 'unsupported_filter', 'sort'])
      expect((await code('?agent_id=abc'))[1]).toBe('invalid_id')
      expect((await code(`?agent_id=${a1}&agent_id=agt_x`))[1]).toBe('invalid_id')
      expect((await code('', agentsOnly))[1]).toBe('insufficient_scope')
      expect((await code('', master)).slice(0, 2)).toEqual([403, 'forbidden_account'])
      expect((await code('?account_id=nope'))[1]).toBe('invalid_id')
      expect((await code(`?account_id=${other.accountId}`)).slice(0, 2)).toEqual([403, 'forbidden_account'])
      if (path === '/metrics') {
        expect(await code('?group_by=day')).toEqual([400, 'unsupported_filter', 'group_by'])
      } else {
        expect(await code('?group_by=week')).toEqual([400, 'unsupported_filter', 'group_by'])
        expect(await code('?group_by=day&group_by=agent')).toEqual([400, 'validation_error', 'group_by'])
      }
    })
  }
})
