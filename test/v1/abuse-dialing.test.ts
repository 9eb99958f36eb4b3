// Abuse and cost, the dialling side (issue 30; decisions, Security rules "Calls cost money", "Checks at dial
// time", "Inbound quotas"), on a server of this file's own on the simulated network: it changes the operator's
// call_countries and serves the minute sweep two campaigns a pass (SVC_CAMPAIGN_SWEEP_BATCH, test-only), which
// no other file may see. Premium-rate and similar numbers are refused on POST /calls, in a transfer_directory
// and skipped as campaign contacts; call_countries refuses the rest of the world; a partner's 51st member of
// the day is 429; a queued call is checked again when it is dialled (do-not-call, a paused agent); a
// suspended account's campaign dials nothing more; inbound calls have their own daily quota and a per-caller
// hourly one; the minute sweep serves a campaign beyond its first window.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApi, err, expectError, type Api } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { ownDatabase, type OwnDatabase } from '../helpers/own-database'
import { freshNumber } from '../helpers/phone'
import { startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { sleep, until } from '../helpers/wait'
import { verifies } from '../requirements'

const ALL_DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']
/** A weekday three days from today (UTC): a window closed now and for the next two days. */
const CLOSED = () => ({
  timezone: 'UTC',
  days: [ALL_DAYS[(new Date().getUTCDay() + 6 + 3) % 7]],
  start: '09:00',
  end: '17:00',
})
const OPEN = { timezone: 'UTC', days: ALL_DAYS, start: '00:00', end: '24:00' }
const PREMIUM_US = '+19005551234'
const PREMIUM_UK = '+449091234567'
/** A fresh US number the simulated network answers (not …0000, …7777, …8888 or …9999). */
const answering = () => freshNumber((n) => !/(0000|7777|8888|9999)$/.test(n))
/** A fresh US number ending in `tail` (0000: no answer; 7777: rings 20 s). */
const endingIn = (tail: string) => `${freshNumber().slice(0, -4)}${tail}`

let server: TestServer
let site: TestSite
let master: Api
let own: OwnDatabase

beforeAll(async () => {
  // Always a database of its own (on PostgreSQL, one created for this file): call_countries is platform-wide,
  // and on the run's shared PostgreSQL every other test server would apply it within its 5 s poll.
  own = await ownDatabase('dialing')
  server = await startServer({
    env: {
      ...own.env,
      SVC_RATE_LIMITS: 'read=100000,write=100000,build=100000,calls=100000',
      SVC_CAMPAIGN_SWEEP_BATCH: '2',
    },
  })
  master = createApi(server.base, server.masterKey)
  site = await serveSite({
    '/': { body: html('Harbour Taxis', '<h1>Harbour Taxis</h1><p>Harbour Taxis drives people around Hobart.</p>') },
  })
  sweep = await sweepCampaigns()
}, 180_000)
afterAll(async () => {
  await site?.close()
  await server?.stop()
  await own?.drop()
})

/** A tenant with a phone agent and a profile of it. */
async function phoneTenant() {
  const t = await createTenant(master)
  const agent = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' })
  const p = await t.api.post(`/agents/${agent}/profiles`, { name: 'Renewals', role: 'the renewals assistant' })
  expect(p.status, p.text).toBe(201)
  return { t, agent, profile: p.body.profile_id as string }
}

/**
 * The minute sweep's campaigns, started when the file starts so that its minute passes (70–135 s of waiting)
 * run while the other tests do; the file's last test checks them. Two campaigns whose window stays closed,
 * then one whose window opens at the next minute: the start's round dials nothing, so only a sweep pass can
 * dial it, and each pass serves two campaigns. Its contact is in GB, so that the call_countries test (GB, IE
 * for a few seconds) cannot make it undiallable, and it never answers (…0000).
 */
async function sweepCampaigns() {
  const o = await phoneTenant()
  await campaign(o, [endingIn('0000')], { schedule: CLOSED() })
  await campaign(o, [endingIn('0000')], { schedule: CLOSED() })
  // The next minute boundary, or the one after when it is under 15 s away: the start's round must come
  // before the window opens, or it would dial the campaign itself and prove nothing of the sweep.
  let opens = Math.ceil((Date.now() + 1) / 60_000) * 60_000
  if (opens - Date.now() < 15_000) opens += 60_000
  const at = new Date(opens)
  const hhmm = `${String(at.getUTCHours()).padStart(2, '0')}:${String(at.getUTCMinutes()).padStart(2, '0')}`
  const late = await campaign(o, ['+447911120000'], {
    schedule: { timezone: 'UTC', days: ALL_DAYS, start: hhmm, end: '24:00' },
  })
  expect(Date.now(), 'the campaign started before its window opened').toBeLessThan(opens)
  return { o, late, opens, started: Date.now() }
}
let sweep: Awaited<ReturnType<typeof sweepCampaigns>>

/** A started campaign of the agent over `phones`. */
async function campaign(
  o: { t: Tenant; agent: string; profile: string },
  phones: string[],
  extra: Record<string, unknown> = {},
) {
  const list = await o.t.api.post(`/agents/${o.agent}/lists`, { name: 'Contacts' })
  expect(list.status, list.text).toBe(201)
  const imp = await o.t.api.post(`/lists/${list.body.list_id}/import`, { contacts: phones.map((phone) => ({ phone })) })
  expect(imp.status, imp.text).toBe(200)
  expect(imp.body.imported).toBe(phones.length)
  const c = await o.t.api.post('/campaigns', {
    agent_id: o.agent,
    profile_id: o.profile,
    list_id: list.body.list_id,
    name: 'Renewals',
    schedule: OPEN,
    ...extra,
  })
  expect(c.status, c.text).toBe(201)
  const started = await o.t.api.post(`/campaigns/${c.body.campaign_id}/start`)
  expect(started.status, started.text).toBe(200)
  return c.body.campaign_id as string
}

const callsOf = async (api: Api, query: string, account?: string) => {
  const r = await api.get(`/calls?limit=100&${query}`, account ? { headers: { 'x-svc-account': account } } : {})
  expect(r.status, r.text).toBe(200)
  return r.body.data as any[]
}

describe('calls cost money: numbers never dialled', () => {
  let o: Awaited<ReturnType<typeof phoneTenant>>
  /** The agent's inbound number (its transfer_call runs on calls to it). */
  let line: string
  beforeAll(async () => {
    o = await phoneTenant()
    line = answering()
    const n = await o.t.api.post('/phone-numbers', { e164: line, agent_id: o.agent })
    expect(n.status, n.text).toBe(201)
  }, 120_000)

  it('POST /calls refuses premium-rate numbers with 400 invalid_phone naming why', async () => {
    verifies('abuse.dial.premium-calls')
    for (const to of [PREMIUM_US, PREMIUM_UK]) {
      const r = await o.t.api.post('/calls', { agent_id: o.agent, to, role: 'a caller' })
      expectError(r, 400, 'invalid_phone', 'to')
      expect(err(r).message).toMatch(/premium-rate/)
    }
    expect(await callsOf(o.t.api, `to=${encodeURIComponent(PREMIUM_US)}`)).toEqual([])
    // An ordinary number still dials.
    const ok = await o.t.api.post('/calls', { agent_id: o.agent, to: endingIn('0000'), role: 'a caller' })
    expect(ok.status, ok.text).toBe(201)
  })

  it('a transfer_directory entry with a premium-rate number is 400 invalid_phone on its field', async () => {
    verifies('abuse.dial.premium-transfer')
    const r = await o.t.api.patch(`/agents/${o.agent}`, {
      capability_settings: { transfer_directory: [{ name: 'Sales', phone: PREMIUM_UK }] },
    })
    expectError(r, 400, 'invalid_phone', 'capability_settings.transfer_directory.0.phone')
    expect(err(r).message).toMatch(/premium-rate/)
    const ok = await o.t.api.patch(`/agents/${o.agent}`, {
      capabilities: ['transfer_call'],
      capability_settings: { transfer_directory: [{ name: 'Sales', phone: '+14155550100' }] },
    })
    expect(ok.status, ok.text).toBe(200)
  })

  it('a campaign skips a premium-rate contact at dial time: failed, outcome invalid_phone, never called', async () => {
    verifies('abuse.dial.campaign-premium')
    const ordinary = endingIn('0000')
    const id = await campaign(o, [PREMIUM_US, ordinary])
    const done = await until(
      'the campaign to complete',
      async () => {
        const r = await o.t.api.get(`/campaigns/${id}`)
        return r.body.status === 'completed' ? r.body : null
      },
      60_000,
    )
    expect(done.progress).toMatchObject({ total: 2, failed: 1, no_answer: 1 })
    expect(done.progress.outcomes.invalid_phone).toBe(1)
    const contacts = (await o.t.api.get(`/campaigns/${id}/contacts`)).body.data as any[]
    expect(contacts.find((c) => c.phone_e164 === PREMIUM_US)).toMatchObject({
      status: 'failed',
      outcome: 'invalid_phone',
      attempts: 0,
      last_call_id: null,
    })
    const placed = await callsOf(o.t.api, `campaign_id=${id}`)
    expect(placed.map((c) => c.to)).toEqual([ordinary])
  })

  it('call_countries (GET/PATCH /admin/config, validated) refuses numbers of other countries on calls and campaigns', async () => {
    verifies('abuse.dial.call-countries', 'abuse.dial.premium-transfer')
    expectError(await master.patch('/admin/config', { call_countries: ['XX'] }), 400, 'validation_error')
    expectError(await master.patch('/admin/config', { call_countries: [] }), 400, 'validation_error')
    expectError(await master.patch('/admin/config', { call_countries: 'GB' }), 400, 'validation_error')
    const set = await master.patch('/admin/config', { call_countries: ['gb', 'GB', 'ie'] })
    expect(set.status, set.text).toBe(200)
    expect(set.body.call_countries).toEqual(['GB', 'IE'])
    expect(set.body.overrides.call_countries).toEqual(['GB', 'IE'])
    expect((await master.get('/admin/config')).body.call_countries).toEqual(['GB', 'IE'])
    try {
      const us = await o.t.api.post('/calls', { agent_id: o.agent, to: endingIn('0000'), role: 'a caller' })
      expectError(us, 400, 'invalid_phone', 'to')
      expect(err(us).message).toMatch(/in US, outside the countries calls may go to \(GB, IE\)/)
      // A UK premium-rate number stays refused inside the allowed countries.
      expectError(
        await o.t.api.post('/calls', { agent_id: o.agent, to: PREMIUM_UK, role: 'a caller' }),
        400,
        'invalid_phone',
        'to',
      )
      // A transfer leg and a campaign contact in the US are refused the same way.
      expectError(
        await o.t.api.patch(`/agents/${o.agent}`, {
          capability_settings: { transfer_directory: [{ name: 'Sales', phone: '+14155550101' }] },
        }),
        400,
        'invalid_phone',
        'capability_settings.transfer_directory.0.phone',
      )
      // transfer_call checks its leg when it runs: the directory's US number, saved before the list was set,
      // is not transferred to.
      const tr = await o.t.api.post('/simulator/inbound-calls', {
        to: line,
        from: answering(),
        utterances: ['Please transfer me to Sales'],
      })
      expect(tr.status, tr.text).toBe(202)
      const conv = await until(
        'the inbound call to end',
        async () => {
          const r = await o.t.api.get(`/conversations/${tr.body.conversation_id}?include=transcript,metrics`)
          return r.body.status !== 'in_progress' ? r.body : null
        },
        60_000,
      )
      expect(conv.status).toBe('completed')
      expect((conv.transcript as any[]).some((x) => x.speaker === 'visitor')).toBe(true)
      expect(conv.metrics.end_reason).not.toBe('transferred')
      expect(conv.outcome).not.toBe('transferred')
      const id = await campaign(o, [answering()])
      const done = await until(
        'the campaign to complete',
        async () => {
          const r = await o.t.api.get(`/campaigns/${id}`)
          return r.body.status === 'completed' ? r.body : null
        },
        30_000,
      )
      expect(done.progress).toMatchObject({ total: 1, failed: 1, outcomes: { invalid_phone: 1 } })
      expect(await callsOf(o.t.api, `campaign_id=${id}`)).toEqual([])
    } finally {
      const back = await master.patch('/admin/config', { call_countries: null })
      expect(back.status, back.text).toBe(200)
      expect(back.body.call_countries).toBeNull()
    }
    const ok = await o.t.api.post('/calls', { agent_id: o.agent, to: endingIn('0000'), role: 'a caller' })
    expect(ok.status, ok.text).toBe(201)
  })
})

describe('partner members', () => {
  it('a partner creates at most 50 members a day, then 429 quota_exceeded with Retry-After', async () => {
    verifies('abuse.dial.partner-members')
    const partner = await createTenant(master)
    const started = Date.now()
    // Four at a time: each create hashes a password with scrypt (~0.3 s of CPU on libuv's pool), one after
    // the other that was 25–80 s of mostly waiting. All 50 are under the quota whatever their order.
    let next = 0
    const creator = async () => {
      for (let i = next++; i < 50; i = next++) {
        const r = await partner.api.post('/partners/members', { email: `m${i}-${started}@example.com`, plan: 'trial' })
        expect(r.status, r.text).toBe(201)
      }
    }
    await Promise.all([creator(), creator(), creator(), creator()])
    const took = Date.now() - started
    console.log(`[abuse-dialing] 50 partner members created in ${took} ms`)
    const over = await partner.api.post('/partners/members', { email: `m50-${started}@example.com` })
    expectError(over, 429, 'quota_exceeded')
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0)
    const listed = await partner.api.get('/partners/members?limit=100')
    expect(listed.body.data).toHaveLength(50)
    // Another partner has its own 50.
    const other = await createTenant(master)
    const theirs = await other.api.post('/partners/members', { email: `o-${started}@example.com` })
    expect(theirs.status, theirs.text).toBe(201)
  }, 240_000) // 50 creates, each with its scrypt hash: 50–80 s one at a time on a loaded machine
})

describe('checks at dial time', () => {
  it('a queued call is checked again when dialled: do-not-call, a paused agent or an unpaid account end it canceled, undialled', async () => {
    verifies('abuse.dial.queued-recheck')
    const o = await phoneTenant()
    const place = async (to: string) => {
      const r = await o.t.api.post('/calls', { agent_id: o.agent, to, profile_id: o.profile })
      expect(r.status, r.text).toBe(201)
      return r.body
    }
    const lines = (await o.t.api.get(`/accounts/${o.t.accountId}/limits`)).body.max_concurrent_calls as number
    const ringing: string[] = []
    for (let i = 0; i < lines; i++) ringing.push((await place(endingIn('7777'))).call_id)
    const listedLater = endingIn('7777')
    const q1 = await place(listedLater)
    const q2 = await place(endingIn('7777'))
    expect([q1.status, q2.status]).toEqual(['queued', 'queued'])
    expect((await o.t.api.post('/dnc', { phone: listedLater })).status).toBe(201)

    // A line frees: the listed number is not dialled, the next queued call takes the line.
    expect((await o.t.api.delete(`/calls/${ringing.shift()}`)).status).toBe(200)
    const c1 = await until(
      'the listed call to end',
      async () => {
        const r = await o.t.api.get(`/calls/${q1.call_id}`)
        return r.body.status !== 'queued' ? r.body : null
      },
      10_000,
    )
    expect(c1).toMatchObject({ status: 'canceled', outcome: 'canceled', started_at: null, answered_at: null })
    expect(c1.failure_reason).toMatch(/do-not-call list/)
    await until(
      'the next queued call to ring',
      async () => ((await o.t.api.get(`/calls/${q2.call_id}`)).body.status === 'ringing' ? true : null),
      10_000,
    )

    // The agent is paused while a call waits: it is not dialled either.
    const q3 = await place(endingIn('7777'))
    expect(q3.status).toBe('queued')
    const paused = await master.post(`/admin/agents/${o.agent}/actions`, { action: 'pause' })
    expect(paused.status, paused.text).toBe(200)
    try {
      expect((await o.t.api.delete(`/calls/${ringing.shift()}`)).status).toBe(200)
      const c3 = await until(
        'the paused agent’s call to end',
        async () => {
          const r = await o.t.api.get(`/calls/${q3.call_id}`)
          return r.body.status !== 'queued' ? r.body : null
        },
        10_000,
      )
      expect(c3).toMatchObject({ status: 'canceled', started_at: null })
      expect(c3.failure_reason).toMatch(/agent was paused/)
    } finally {
      await master.post(`/admin/agents/${o.agent}/actions`, { action: 'resume' })
    }

    // The account can no longer pay (a plan with no allowance and an empty wallet: the 402 check) while a call
    // waits: it is not dialled either.
    ringing.push((await place(endingIn('7777'))).call_id)
    const q4 = await place(endingIn('7777'))
    expect(q4.status).toBe('queued')
    const unpaid = await master.patch(`/admin/customers/${o.t.userId}/plan`, { plan: 'starter', plan_limit: 0 })
    expect(unpaid.status, unpaid.text).toBe(200)
    expect((await o.t.api.delete(`/calls/${ringing.shift()}`)).status).toBe(200)
    const c4 = await until(
      'the unpaid account’s call to end',
      async () => {
        const r = await o.t.api.get(`/calls/${q4.call_id}`)
        return r.body.status !== 'queued' ? r.body : null
      },
      10_000,
    )
    expect(c4).toMatchObject({ status: 'canceled', started_at: null })
    expect(c4.failure_reason).toMatch(/^Payment is required/)
    for (const id of [...ringing, q2.call_id]) await o.t.api.delete(`/calls/${id}`)
  }, 120_000)

  it('a suspended account’s running campaign dials nothing more (it stays running)', async () => {
    verifies('abuse.dial.suspended-campaign')
    const o = await phoneTenant()
    const phones = Array.from({ length: 12 }, answering)
    const id = await campaign(o, phones, { max_concurrent: 1 })
    await until('the first campaign call', async () => (await callsOf(o.t.api, `campaign_id=${id}`)).length > 0, 20_000)
    const suspended = await master.patch(`/users/${o.t.userId}`, { status: 'suspended' })
    expect(suspended.status, suspended.text).toBe(200)
    try {
      const acc = o.t.accountId
      // The call in progress runs to its end; then nothing more is dialled.
      const before = await until(
        'the live campaign call to end',
        async () => {
          const calls = await callsOf(master, `campaign_id=${id}`, acc)
          return calls.every((c) => ['completed', 'no_answer', 'failed', 'canceled'].includes(c.status)) ? calls : null
        },
        30_000,
      )
      await sleep(6_000)
      const after = await callsOf(master, `campaign_id=${id}`, acc)
      expect(after.length).toBe(before.length)
      expect(after.length).toBeLessThan(phones.length)
      const c = await master.get(`/campaigns/${id}`, { headers: { 'x-svc-account': acc } })
      expect(c.status, c.text).toBe(200)
      expect(c.body.status).toBe('running')
      expect(c.body.progress.pending).toBeGreaterThan(0)
    } finally {
      expect((await master.patch(`/users/${o.t.userId}`, { status: 'active' })).status).toBe(200)
      await o.t.api.post(`/campaigns/${id}/stop`)
    }
  }, 120_000)
})

describe('inbound quotas', () => {
  /** A tenant whose number answers with its phone agent. */
  async function inboundTenant() {
    const t = await createTenant(master)
    const agent = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    const to = answering()
    const n = await t.api.post('/phone-numbers', { e164: to, agent_id: agent })
    expect(n.status, n.text).toBe(201)
    return { t, agent, to }
  }
  const ring = async (o: { t: Tenant; to: string }, from: string) => {
    const r = await o.t.api.post('/simulator/inbound-calls', { to: o.to, from, utterances: ['Hi'] })
    expect(r.status, r.text).toBe(202)
    return r.body as { conversation_id: string; status: string }
  }
  const reasonOf = async (o: { t: Tenant }, id: string) =>
    (await o.t.api.get(`/conversations/${id}?include=metrics`)).body.metrics.failure_reason

  it('inbound calls count against inbound_calls_per_day, never max_calls_per_day; GET limits shows both', async () => {
    verifies('abuse.dial.inbound-daily')
    const o = await inboundTenant()
    const lim = await master.patch(`/users/${o.t.userId}`, {
      limits: { max_calls_per_day: 1, inbound_calls_per_day: 2 },
    })
    expect(lim.status, lim.text).toBe(200)
    expect((await ring(o, answering())).status).toBe('in_progress')
    expect((await ring(o, answering())).status).toBe('in_progress')
    const third = await ring(o, answering())
    expect(third.status).toBe('failed')
    expect(await reasonOf(o, third.conversation_id)).toBe('quota_exceeded')
    // The outbound quota is untouched by the two inbound calls: one outbound call, then 429.
    const out = await o.t.api.post('/calls', { agent_id: o.agent, to: endingIn('0000'), role: 'a caller' })
    expect(out.status, out.text).toBe(201)
    expectError(
      await o.t.api.post('/calls', { agent_id: o.agent, to: endingIn('0000'), role: 'a caller' }),
      429,
      'quota_exceeded',
    )
    const l = await o.t.api.get(`/accounts/${o.t.accountId}/limits`)
    expect(l.status, l.text).toBe(200)
    expect(l.body).toMatchObject({
      max_calls_per_day: 1,
      inbound_calls_per_day: 2,
      inbound_calls_today: 2,
      inbound_calls_per_caller_per_hour: 10,
    })
    // The default is 500.
    await master.patch(`/users/${o.t.userId}`, { limits: { inbound_calls_per_day: null } })
    expect((await o.t.api.get(`/accounts/${o.t.accountId}/limits`)).body.inbound_calls_per_day).toBe(500)
  }, 120_000)

  it('one caller number opens at most 10 inbound calls an hour per account, then a refusal and a failed conversation', async () => {
    verifies('abuse.dial.inbound-per-caller')
    const o = await inboundTenant()
    const caller = answering()
    const first: string[] = []
    for (let i = 0; i < 10; i++) first.push((await ring(o, caller)).conversation_id)
    for (const id of first) expect(await reasonOf(o, id)).not.toBe('caller_rate_limited')
    const eleventh = await ring(o, caller)
    expect(eleventh.status).toBe('failed')
    const conv = await o.t.api.get(`/conversations/${eleventh.conversation_id}?include=metrics,identity`)
    expect(conv.body).toMatchObject({ status: 'failed', agent_id: o.agent })
    expect(conv.body.metrics.failure_reason).toBe('caller_rate_limited')
    // Another caller is not held back by this one (once a line is free).
    const other = await until(
      'another caller to get through',
      async () => {
        const r = await ring(o, answering())
        return r.status === 'in_progress' ? r : null
      },
      60_000,
      1_000,
    )
    expect(other.status).toBe('in_progress')
  }, 120_000)
})

describe('the minute sweep', () => {
  it('serves a campaign beyond its first window (SVC_CAMPAIGN_SWEEP_BATCH=2, three running campaigns)', async () => {
    verifies('abuse.dial.sweep-fair')
    // Started by the file's beforeAll (see sweepCampaigns): the minute passes ran while the tests above did.
    const [call] = await until(
      'a sweep pass to dial the third campaign',
      async () => {
        const calls = await callsOf(sweep.o.t.api, `campaign_id=${sweep.late}`)
        return calls.length > 0 ? calls : null
      },
      300_000,
      1_000,
    )
    // Dialled once its window was open, so by a pass, not by the start's round.
    expect(Date.parse(call.created_at)).toBeGreaterThanOrEqual(sweep.opens)
    console.log(`[abuse-dialing] the third campaign was dialled ${Date.now() - sweep.started} ms after its start`)
  }, 360_000) // two or three minute passes of pg-boss's cron: 70–135 s after the start, most of it spent above
})
