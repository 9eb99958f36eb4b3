// Campaigns that dial by themselves, on servers of their own on the simulated network. A campaign of 200
// contacts (no-answer …0000 numbers, failing …9999 numbers, 5 do-not-call numbers, max_concurrent 5,
// max_attempts 2, a 1.2 s retry delay) runs to completed: the progress adds up, no number is called more
// often than allowed and the concurrency, read from the calls' started_at and ended_at, never exceeds 5.
// On PostgreSQL a second server on the same database dials too. The same campaign survives the server being
// SIGKILLed twice with the same final counts. Then the window (in the contact's timezone, else the
// campaign's) and pause (no new dials; calls in progress finish).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApi, type Api } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { sleep, until } from '../helpers/wait'
import { verifies } from '../requirements'

const ENV = {
  SVC_RATE_LIMITS: 'read=100000,write=100000,build=100000,calls=100000',
  // A killed instance is declared dead after 6 s (15 s by default). Shorter risks declaring a live but
  // loaded instance dead (its calls then end as interrupted and are retried).
  SVC_CALL_STALE_SECONDS: '6',
  // Every instance of this file (the second one, the restarted ones) shares one job queue, and no other.
  SVC_QUEUE_SCHEMA: 'pgboss_campaign_run',
}
const ALL_DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']
const MAX_ATTEMPTS = 2
const MAX_CONCURRENT = 5

let servers: TestServer[] = []
let site: TestSite
let t: Tenant
let api: Api
let agent: string
let profile: string
let runs = 0

/** 200 contacts: 20 that never answer, 10 that fail, 5 on the do-not-call list, 165 that answer. */
function contacts(run: number) {
  const rows: { phone: string; first_name: string; kind: 'answer' | 'no_answer' | 'failed' | 'dnc' }[] = []
  for (let i = 0; i < 200; i++) {
    const exchange = 200 + run * 200 + i
    const kind = i < 20 ? 'no_answer' : i < 30 ? 'failed' : i < 35 ? 'dnc' : 'answer'
    const line = kind === 'no_answer' ? '0000' : kind === 'failed' ? '9999' : String(1000 + i).padStart(4, '0')
    rows.push({ phone: `+1646${exchange}${line}`, first_name: `Contact ${i}`, kind })
  }
  return rows
}

async function campaignOf(rows: ReturnType<typeof contacts>, extra: Record<string, unknown> = {}) {
  const list = await api.post(`/agents/${agent}/lists`, { name: `Run ${++runs}` })
  expect(list.status, list.text).toBe(201)
  const imported = await api.post(`/lists/${list.body.list_id}/import`, {
    contacts: rows.map(({ phone, first_name }) => ({ phone, first_name })),
  })
  expect(imported.status, imported.text).toBe(200)
  expect(imported.body.imported).toBe(rows.length)
  for (const r of rows.filter((x) => x.kind === 'dnc'))
    expect((await api.post('/dnc', { phone: r.phone })).status).toBe(201)
  const c = await api.post('/campaigns', {
    agent_id: agent,
    profile_id: profile,
    list_id: list.body.list_id,
    name: `Renewals ${runs}`,
    schedule: { timezone: 'UTC', days: ALL_DAYS, start: '00:00', end: '24:00' },
    max_concurrent: MAX_CONCURRENT,
    max_attempts: MAX_ATTEMPTS,
    retry_delay_minutes: 0.02,
    ...extra,
  })
  expect(c.status, c.text).toBe(201)
  return c.body.campaign_id as string
}

async function callsOf(campaignId: string, using = api) {
  const out: any[] = []
  let cursor: string | null = null
  do {
    const r: { status: number; text: string; body: any } = await using.get(
      `/calls?campaign_id=${campaignId}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    )
    expect(r.status, r.text).toBe(200)
    out.push(...r.body.data)
    cursor = r.body.pagination.has_more ? r.body.pagination.next_cursor : null
  } while (cursor)
  return out
}

const completed = (id: string, timeoutMs = 240_000) =>
  until(
    `campaign ${id} to complete`,
    async () => {
      const r = await api.get(`/campaigns/${id}`).catch(() => null)
      return r?.body?.status === 'completed' ? r.body : null
    },
    timeoutMs,
  )

/** The most calls that overlapped in time (an end at the same instant as a start does not overlap). */
function maxOverlap(calls: { started_at: string; ended_at: string }[]) {
  const points = calls.flatMap((c) => [
    { at: Date.parse(c.started_at), d: 1 },
    { at: Date.parse(c.ended_at), d: -1 },
  ])
  points.sort((a, b) => a.at - b.at || a.d - b.d)
  let now = 0
  let max = 0
  for (const p of points) {
    now += p.d
    max = Math.max(max, now)
  }
  return max
}

/** The final figures every run must reach, whatever happened on the way. */
async function expectFinal(id: string, rows: ReturnType<typeof contacts>) {
  const progress = (await api.get(`/campaigns/${id}/progress`)).body
  expect(progress).toMatchObject({
    total: 200,
    pending: 0,
    in_progress: 0,
    completed: 165,
    no_answer: 20,
    failed: 10,
    dnc_skipped: 5,
  })
  const sum = (progress.completed as number) + progress.no_answer + progress.failed + progress.dnc_skipped
  expect(sum).toBe(progress.total)
  const outcomes = Object.values(progress.outcomes as Record<string, number>).reduce((a, b) => a + b, 0)
  expect(outcomes).toBe(200)

  const calls = await callsOf(id)
  const byNumber = new Map<string, any[]>()
  for (const c of calls) byNumber.set(c.to, [...(byNumber.get(c.to) ?? []), c])
  for (const r of rows) {
    const mine = byNumber.get(r.phone) ?? []
    if (r.kind === 'dnc') expect(mine, r.phone).toHaveLength(0)
    else expect(mine.length, r.phone).toBeGreaterThanOrEqual(1)
    expect(mine.length, r.phone).toBeLessThanOrEqual(MAX_ATTEMPTS)
    if (r.kind === 'no_answer') expect(mine.every((c) => c.status === 'no_answer')).toBe(true)
  }
  for (const c of calls) {
    expect(['completed', 'no_answer', 'failed']).toContain(c.status)
    expect(c.campaign_id).toBe(id)
    expect(c.ended_at).not.toBeNull()
  }
  expect(maxOverlap(calls)).toBeLessThanOrEqual(MAX_CONCURRENT)
  // Each contact row names its last call and its attempts.
  const rowsPage = await api.get(`/campaigns/${id}/contacts?limit=1000`)
  for (const c of rowsPage.body.data) {
    const mine = byNumber.get(c.phone_e164) ?? []
    expect(c.attempts).toBe(mine.length)
    if (mine.length) expect(mine.map((x) => x.call_id)).toContain(c.last_call_id)
  }
  return calls
}

beforeAll(async () => {
  servers.push(await startServer({ env: ENV }))
  api = createApi(servers[0].base, servers[0].masterKey)
  site = await serveSite({
    '/': { body: html('Harbour Taxis', '<h1>Harbour Taxis</h1><p>Harbour Taxis drives people around Hobart.</p>') },
  })
  const master = createApi(servers[0].base, servers[0].masterKey)
  t = await createTenant(master)
  api = t.api
  agent = await buildAgent(api, t.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' })
  const p = await api.post(`/agents/${agent}/profiles`, {
    name: 'Renewals',
    role: 'the renewals assistant of Harbour Taxis calling {{first_name}}',
    greeting: 'Hi {{first_name}}, this is Harbour Taxis.',
  })
  expect(p.status, p.text).toBe(201)
  profile = p.body.profile_id
  const lim = await master.patch(`/users/${t.userId}`, { limits: { max_calls_per_day: 100_000 } })
  expect(lim.status, lim.text).toBe(200)
  const own = `+1646555${String(Date.now() % 10_000).padStart(4, '0')}`
  expect((await api.post('/phone-numbers', { e164: own, agent_id: agent })).status).toBe(201)
}, 120_000)

afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => {})
  await site?.close()
})

/** Points the tenant's client at a running server (after a restart the port changes). */
function useServer(s: TestServer) {
  api = createApi(s.base, t.key)
}

describe('campaigns dialling by themselves (simulated network)', () => {
  it('a campaign of 200 contacts runs to completed within max_concurrent and max_attempts', async () => {
    verifies('outbound.campaigns-run')
    const rows = contacts(0)
    if (process.env.DATABASE_URL) {
      // A second instance on the same database: both dial the campaign's rounds.
      servers.push(await startServer({ env: ENV, masterKey: servers[0].masterKey }))
    }
    const id = await campaignOf(rows)
    const started = Date.now()
    const s = await api.post(`/campaigns/${id}/start`)
    expect(s.status, s.text).toBe(200)
    expect(s.body.status).toBe('running')
    const done = await completed(id)
    const seconds = (Date.now() - started) / 1000
    expect(done.finished_at).not.toBeNull()
    const calls = await expectFinal(id, rows)
    const noAnswers = calls.filter((c) => c.status === 'no_answer')
    // Each never-answering number was tried max_attempts times; any other no answer is a call whose instance
    // looked dead to another one (under load on PostgreSQL), reconciled as interrupted and retried.
    const silent = new Set(rows.filter((r) => r.kind === 'no_answer').map((r) => r.phone))
    expect(noAnswers.filter((c) => silent.has(c.to))).toHaveLength(20 * MAX_ATTEMPTS)
    for (const c of noAnswers.filter((x) => !silent.has(x.to))) expect(c.failure_reason).toBe('interrupted')
    // A retry waits its delay after the no answer.
    const first = new Map<string, any>()
    for (const c of [...noAnswers].sort((a, b) => Date.parse(a.started_at) - Date.parse(b.started_at)))
      if (first.has(c.to))
        expect(Date.parse(c.started_at) - Date.parse(first.get(c.to).ended_at)).toBeGreaterThanOrEqual(1000)
      else first.set(c.to, c)
    console.log(
      `[campaign] 200 contacts, ${calls.length} dials in ${seconds.toFixed(1)} s: ${(calls.length / seconds).toFixed(1)} dials/s at max_concurrent ${MAX_CONCURRENT}${servers.length > 1 ? ' on two instances' : ''}`,
    )
    if (servers.length > 1) {
      await servers[1].stop()
      servers = servers.slice(0, 1)
    }
  }, 300_000)

  it('survives two SIGKILLs of the server while running: same final counts, no duplicate attempt', async () => {
    verifies('outbound.campaigns-restart')
    const rows = contacts(1)
    const id = await campaignOf(rows)
    expect((await api.post(`/campaigns/${id}/start`)).status).toBe(200)
    for (const after of [40, 110]) {
      await until(
        `${after} contacts final`,
        async () => {
          const p = (await api.get(`/campaigns/${id}/progress`)).body
          return p.completed + p.no_answer + p.failed + p.dnc_skipped >= after ? p : null
        },
        120_000,
      )
      const old = servers[0]
      const inFlight = (await api.get(`/campaigns/${id}/progress`)).body.in_progress
      await old.stop('SIGKILL')
      console.log(`[campaign] SIGKILL with ${inFlight} calls in flight`)
      const again = await startServer({ env: ENV, dataDir: old.dataDir, masterKey: old.masterKey })
      servers[0] = again
      useServer(again)
    }
    await completed(id)
    await expectFinal(id, rows)
    // A call cut off by a kill is closed by the survivor as its session would have closed it: the
    // conversation is completed with end_reason interrupted and gets its summary (so the usage was closed
    // and conversation.ended written in the same transaction), and none stays in progress.
    const interrupted = (await callsOf(id)).filter((c) => c.outcome === 'interrupted' && c.conversation_id)
    console.log(`[campaign] ${interrupted.length} answered calls were interrupted by the kills`)
    for (const c of interrupted) {
      const conv = await until(
        `the summary of interrupted ${c.conversation_id}`,
        async () => {
          const r = await api.get(`/conversations/${c.conversation_id}?include=summary,metrics`)
          return r.body.summary_status === 'ready' ? r.body : null
        },
        60_000,
      )
      expect(conv.status).toBe('completed')
      expect(conv.metrics.end_reason).toBe('interrupted')
    }
    const open = await api.get(`/conversations?status=in_progress&channel=phone_outbound`)
    expect(open.body.data).toEqual([])
  }, 360_000)

  it("dials only inside the window, in the contact's timezone, else the campaign's", async () => {
    verifies('outbound.campaigns-window')
    // UTC-12 and UTC+12 are a day apart: a window of today's weekday in UTC-12 is closed in UTC+12.
    const day = new Intl.DateTimeFormat('en-US', { timeZone: 'Etc/GMT+12', weekday: 'short' })
      .format(new Date())
      .slice(0, 3)
      .toLowerCase()
    const list = await api.post(`/agents/${agent}/lists`, { name: 'Window' })
    const open = '+16469001234'
    const closed = '+16469001235'
    const imp = await api.post(`/lists/${list.body.list_id}/import`, {
      contacts: [
        { phone: open, timezone: 'Etc/GMT+12', first_name: 'Open' },
        { phone: closed, first_name: 'Closed' },
      ],
    })
    expect(imp.body.imported, imp.text).toBe(2)
    const c = await api.post('/campaigns', {
      agent_id: agent,
      profile_id: profile,
      list_id: list.body.list_id,
      name: 'Window',
      schedule: { timezone: 'Etc/GMT-12', days: [day], start: '00:00', end: '24:00' },
    })
    expect(c.status, c.text).toBe(201)
    const id = c.body.campaign_id
    expect((await api.post(`/campaigns/${id}/start`)).status).toBe(200)
    await until(
      'the open contact to be dialled and answered',
      async () => ((await api.get(`/campaigns/${id}/progress`)).body.completed === 1 ? true : null),
      30_000,
    )
    await sleep(1500)
    const calls = await callsOf(id)
    expect(calls.map((x) => x.to)).toEqual([open])
    const p = (await api.get(`/campaigns/${id}/progress`)).body
    expect(p).toMatchObject({ total: 2, pending: 1, completed: 1 })
    expect((await api.post(`/campaigns/${id}/stop`)).body.status).toBe('stopped')
  }, 60_000)

  it('pause stops new dials at once; calls in progress finish; start resumes; stop ends it', async () => {
    verifies('outbound.campaigns-pause')
    // …7777 numbers ring for 20 s: the calls stay in flight while the campaign is paused.
    const list = await api.post(`/agents/${agent}/lists`, { name: 'Pause' })
    const phones = Array.from({ length: 6 }, (_, i) => `+1646${910 + i}7777`)
    await api.post(`/lists/${list.body.list_id}/import`, {
      contacts: phones.map((phone) => ({ phone, first_name: 'P' })),
    })
    const c = await api.post('/campaigns', {
      agent_id: agent,
      profile_id: profile,
      list_id: list.body.list_id,
      name: 'Pause',
      schedule: { timezone: 'UTC', days: ALL_DAYS, start: '00:00', end: '24:00' },
      max_concurrent: 2,
    })
    const id = c.body.campaign_id
    expect((await api.post(`/campaigns/${id}/start`)).status).toBe(200)
    const ringing = await until(
      'two calls ringing',
      async () => {
        const calls = await callsOf(id)
        return calls.length === 2 ? calls : null
      },
      10_000,
    )
    expect((await api.post(`/campaigns/${id}/pause`)).body.status).toBe('paused')
    // The calls in flight end (canceled here); their lines free up, but a paused campaign dials nothing.
    for (const call of ringing) expect((await api.delete(`/calls/${call.call_id}`)).status).toBe(200)
    await sleep(1500)
    expect(await callsOf(id)).toHaveLength(2)
    expect((await api.get(`/campaigns/${id}/progress`)).body).toMatchObject({ pending: 4, in_progress: 0, failed: 2 })
    expect((await api.post(`/campaigns/${id}/start`)).body.status).toBe('running')
    await until('two more calls', async () => ((await callsOf(id)).length === 4 ? true : null), 10_000)
    expect((await api.post(`/campaigns/${id}/stop`)).body.status).toBe('stopped')
    for (const call of await callsOf(id)) if (call.status === 'ringing') await api.delete(`/calls/${call.call_id}`)
    await sleep(1000)
    expect(await callsOf(id)).toHaveLength(4)
  }, 60_000)
})
