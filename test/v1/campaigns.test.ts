// Campaigns over HTTP against the shared server: create (every field, defaults, draft), validation of each
// field, list with a cursor and filters, read, every transition and 409 invalid_state for the others, the
// first start copying the list's contacts (progress and contacts rows), an empty list completing at once,
// concurrent starts, tenant isolation and scopes. Started campaigns use a schedule window that is closed
// now (one day three days from today), so the dialler places no call and the counts stay as copied.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, err, expectError } from '../helpers/api'
import { freshNumber as freshPhone } from '../helpers/phone'
import { buildAgent } from '../helpers/build'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const KEYS = [
  'campaign_id',
  'agent_id',
  'profile_id',
  'list_id',
  'name',
  'status',
  'schedule',
  'max_concurrent',
  'max_attempts',
  'retry_delay_minutes',
  'progress',
  'created_at',
  'updated_at',
  'started_at',
  'finished_at',
]
const CONTACT_KEYS = ['item_id', 'phone_e164', 'status', 'attempts', 'last_call_id', 'outcome', 'next_attempt_at']
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']
const ZERO = {
  total: 0,
  pending: 0,
  in_progress: 0,
  completed: 0,
  no_answer: 0,
  failed: 0,
  dnc_skipped: 0,
  outcomes: {},
}

/** A weekday three days from today (UTC): the window is closed now and for the next two days. */
const closedDay = () => DAYS[(new Date().getUTCDay() + 6 + 3) % 7]
const CLOSED = () => ({ timezone: 'UTC', days: [closedDay()], start: '09:00', end: '17:00' })

/** A number the simulated network answers (not …0000 or …9999). */
const freshNumber = () => freshPhone((n) => !n.endsWith('0000') && !n.endsWith('9999'))

const keysOf = (o: Record<string, unknown>) =>
  Object.keys(o)
    .filter((k) => k !== 'meta')
    .sort()

describe('campaigns (shared server)', () => {
  const base = inject('base')
  const master = createApi(base, inject('masterKey'))
  let t: Tenant
  let other: Tenant
  let site: TestSite
  let agent: string
  let agent2: string
  let otherAgent: string
  let profile: string
  let profile2: string
  let otherProfile: string
  let otherList: string

  async function newProfile(api = t.api, agt = agent) {
    const r = await api.post(`/agents/${agt}/profiles`, { name: 'Renewals', role: 'the renewals assistant' })
    expect(r.status, r.text).toBe(201)
    return r.body.profile_id as string
  }

  /** A list of the agent with `n` fresh numbers; answers its id and numbers in import order. */
  async function newList(n: number, api = t.api, agt = agent) {
    const r = await api.post(`/agents/${agt}/lists`, { name: `List of ${n}` })
    expect(r.status, r.text).toBe(201)
    const phones = Array.from({ length: n }, freshNumber)
    if (n) {
      const imp = await api.post(`/lists/${r.body.list_id}/import`, {
        contacts: phones.map((phone, i) => ({ phone, name: `Contact ${i}`, plan: 'gold' })),
      })
      expect(imp.status, imp.text).toBe(200)
      expect(imp.body.imported).toBe(n)
    }
    return { id: r.body.list_id as string, phones }
  }

  async function newCampaign(extra: Record<string, unknown> = {}, api = t.api) {
    const list = extra.list_id ? null : await newList(3)
    const r = await api.post('/campaigns', {
      agent_id: agent,
      profile_id: profile,
      list_id: list?.id,
      name: 'Spring renewals',
      schedule: CLOSED(),
      ...extra,
    })
    expect(r.status, r.text).toBe(201)
    return { campaign: r.body, list }
  }

  beforeAll(async () => {
    site = await serveSite({
      '/': { body: html('Harbour Taxis', '<h1>Harbour Taxis</h1><p>Harbour Taxis drives people around Hobart.</p>') },
    })
    ;[t, other] = await Promise.all([createTenant(master), createTenant(master)])
    ;[agent, agent2, otherAgent] = await Promise.all([
      buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' }),
      buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' }),
      buildAgent(other.api, other.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' }),
    ])
    ;[profile, profile2, otherProfile] = await Promise.all([
      newProfile(),
      newProfile(t.api, agent2),
      newProfile(other.api, otherAgent),
    ])
    otherList = (await newList(1, other.api, otherAgent)).id
  }, 120_000)
  afterAll(async () => {
    await site?.close()
  })

  it('creates a draft with every field and the defaults, and reads it back', async () => {
    verifies('outbound.campaigns')
    const list = await newList(2)
    const c = await t.api.post('/campaigns', {
      agent_id: agent,
      profile_id: profile,
      list_id: list.id,
      name: '  Spring renewals ',
      schedule: { timezone: 'europe/london', days: ['mon', 'fri'], start: '09:00', end: '24:00' },
    })
    expect(c.status, c.text).toBe(201)
    expect(keysOf(c.body)).toEqual([...KEYS].sort())
    expect(c.body).toMatchObject({
      campaign_id: expect.stringMatching(/^cmp_\d+$/),
      agent_id: agent,
      profile_id: profile,
      list_id: list.id,
      name: 'Spring renewals',
      status: 'draft',
      schedule: { timezone: 'Europe/London', days: ['mon', 'fri'], start: '09:00', end: '24:00' },
      max_concurrent: 1,
      max_attempts: 1,
      retry_delay_minutes: 60,
      progress: ZERO,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
      started_at: null,
      finished_at: null,
    })
    const got = await t.api.get(`/campaigns/${c.body.campaign_id}`)
    expect(got.status, got.text).toBe(200)
    const { meta: _m1, ...created } = c.body
    const { meta: _m2, ...read } = got.body
    expect(read).toEqual(created)
    const progress = await t.api.get(`/campaigns/${c.body.campaign_id}/progress`)
    expect(progress.status, progress.text).toBe(200)
    const { meta: _m3, ...p } = progress.body
    expect(p).toEqual(ZERO)
    const contacts = await t.api.get(`/campaigns/${c.body.campaign_id}/contacts`)
    expect(contacts.status, contacts.text).toBe(200)
    expect(contacts.body.data).toEqual([])

    const explicit = await t.api.post('/campaigns', {
      agent_id: agent,
      profile_id: profile,
      list_id: list.id,
      name: 'Explicit',
      schedule: { timezone: 'America/New_York', days: ['sun'], start: '00:00', end: '00:01' },
      max_concurrent: 50,
      max_attempts: 10,
      retry_delay_minutes: 0.05,
    })
    expect(explicit.status, explicit.text).toBe(201)
    expect(explicit.body).toMatchObject({ max_concurrent: 50, max_attempts: 10, retry_delay_minutes: 0.05 })
    expectError(await t.api.get('/campaigns/cmp_999999999'), 404, 'not_found')
    expectError(await t.api.get('/campaigns/cmp_x'), 400, 'invalid_id')
  })

  it('validates every field of the body', async () => {
    verifies('outbound.campaigns-validation', 'behaviour.voicemail-policy')
    const list = await newList(0)
    const good = {
      agent_id: agent,
      profile_id: profile,
      list_id: list.id,
      name: 'Valid',
      schedule: { timezone: 'UTC', days: ['mon'], start: '09:00', end: '17:00' },
    }
    const post = (patch: Record<string, unknown>) => t.api.post('/campaigns', { ...good, ...patch })
    const schedule = (patch: Record<string, unknown>) => post({ schedule: { ...good.schedule, ...patch } })
    expect((await post({})).status).toBe(201)

    expectError(await post({ kind: 'x' }), 400, 'unsupported_field', 'kind')
    expectError(await schedule({ window: 'x' }), 400, 'unsupported_field', 'schedule.window')
    for (const key of ['agent_id', 'profile_id', 'list_id', 'name', 'schedule']) {
      const { [key]: _, ...rest } = good as Record<string, unknown>
      expectError(await t.api.post('/campaigns', rest), 400, 'validation_error', key)
    }
    expectError(await post({ agent_id: 'agt_x' }), 400, 'invalid_id', 'agent_id')
    expectError(await post({ profile_id: 'lst_1' }), 400, 'invalid_id', 'profile_id')
    expectError(await post({ list_id: 7 }), 400, 'invalid_id', 'list_id')
    for (const name of ['', '   ', 'x'.repeat(201), 5])
      expectError(await post({ name }), 400, 'validation_error', 'name')
    expectError(await post({ schedule: 'weekdays' }), 400, 'validation_error', 'schedule')
    for (const timezone of ['Mars/Olympus', '+02:00', 'GMT+2', '', 3])
      expectError(await schedule({ timezone }), 400, 'validation_error', 'schedule.timezone')
    for (const days of [[], ['mon', 'mon'], ['monday'], 'mon', [1]]) {
      const r = await schedule({ days })
      expectError(r, 400, 'validation_error')
      expect(err(r).field).toMatch(/^schedule\.days/)
    }
    for (const start of ['9:00', '24:00', '12:60', '0900', 900])
      expectError(await schedule({ start }), 400, 'validation_error', 'schedule.start')
    for (const end of ['24:01', '25:00', '17', null])
      expectError(await schedule({ end }), 400, 'validation_error', 'schedule.end')
    expectError(await schedule({ start: '17:00', end: '09:00' }), 400, 'validation_error', 'schedule.end')
    expectError(await schedule({ start: '09:00', end: '09:00' }), 400, 'validation_error', 'schedule.end')
    for (const max_concurrent of [0, 51, 1.5, '2'])
      expectError(await post({ max_concurrent }), 400, 'validation_error', 'max_concurrent')
    for (const max_attempts of [0, 11, 2.5, null])
      expectError(await post({ max_attempts }), 400, 'validation_error', 'max_attempts')
    for (const retry_delay_minutes of [-1, 10_081, '60'])
      expectError(await post({ retry_delay_minutes }), 400, 'validation_error', 'retry_delay_minutes')
    expect((await post({ retry_delay_minutes: 10_080 })).status).toBe(201)
    // hang_up is the only voicemail policy (an answering machine ends each call at once).
    expect((await post({ voicemail_policy: 'hang_up' })).status).toBe(201)
    for (const voicemail_policy of ['leave_message', 'beep'])
      expectError(await post({ voicemail_policy }), 400, 'unsupported_policy', 'voicemail_policy')
    expectError(await post({ voicemail_message: 'Call back.' }), 400, 'unsupported_field', 'voicemail_message')

    // A profile or list of another agent of the same account.
    expectError(await post({ profile_id: profile2 }), 400, 'validation_error', 'profile_id')
    const list2 = await newList(0, t.api, agent2)
    expectError(await post({ list_id: list2.id }), 400, 'validation_error', 'list_id')
    // Unknown agent, profile or list.
    expectError(await post({ agent_id: 'agt_999999999' }), 404, 'agent_not_found')
    expectError(await post({ profile_id: 'prf_999999999' }), 404, 'not_found')
    expectError(await post({ list_id: 'lst_999999999' }), 404, 'not_found')
  })

  it('lists newest first with a cursor, filtered by agent_id and status', async () => {
    verifies('outbound.campaigns')
    const list = await newList(0, t.api, agent2)
    const mk = async (name: string) => {
      const r = await t.api.post('/campaigns', {
        agent_id: agent2,
        profile_id: profile2,
        list_id: list.id,
        name,
        schedule: CLOSED(),
      })
      expect(r.status, r.text).toBe(201)
      return r.body.campaign_id as string
    }
    const a = await mk('A')
    const b = await mk('B')
    const c = await mk('C')
    expect((await t.api.post(`/campaigns/${b}/stop`)).status).toBe(200)

    const first = await t.api.get(`/campaigns?agent_id=${agent2}&limit=2`)
    expect(first.status, first.text).toBe(200)
    expect(first.body.pagination).toMatchObject({ limit: 2, has_more: true })
    for (const row of first.body.data) expect(keysOf(row)).toEqual([...KEYS].sort())
    const cursor = encodeURIComponent(first.body.pagination.next_cursor)
    const second = await t.api.get(`/campaigns?agent_id=${agent2}&limit=2&cursor=${cursor}`)
    expect(second.status, second.text).toBe(200)
    expect(second.body.pagination.has_more).toBe(false)
    expect([...first.body.data, ...second.body.data].map((x: any) => x.campaign_id)).toEqual([c, b, a])
    // The cursor is bound to the filters.
    expectError(await t.api.get(`/campaigns?agent_id=${agent}&limit=2&cursor=${cursor}`), 400, 'invalid_cursor')

    const stopped = await t.api.get(`/campaigns?agent_id=${agent2}&status=stopped`)
    expect(stopped.body.data.map((x: any) => x.campaign_id)).toEqual([b])
    const drafts = await t.api.get(`/campaigns?agent_id=${agent2}&status=draft`)
    expect(drafts.body.data.map((x: any) => x.campaign_id)).toEqual([c, a])
    const all = await t.api.get('/campaigns?limit=100')
    expect(all.body.data.map((x: any) => x.campaign_id)).toEqual(expect.arrayContaining([a, b, c]))
    expect((await t.api.get(`/campaigns?agent_id=${otherAgent}`)).body.data).toEqual([])
    expectError(await t.api.get('/campaigns?status=finished'), 400, 'unsupported_filter', 'status')
    expectError(await t.api.get('/campaigns?agent_id=x'), 400, 'invalid_id', 'agent_id')
    expectError(await t.api.get('/campaigns?limit=101'), 400, 'invalid_limit')
    expectError(await t.api.get('/campaigns?list_id=lst_1'), 400, 'unsupported_filter', 'list_id')
  })

  it('starts: copies the list into pending contacts, then pauses, resumes and stops; other moves are 409', async () => {
    verifies('outbound.campaigns-transitions', 'outbound.campaigns')
    const { campaign, list } = await newCampaign()
    const id = campaign.campaign_id
    expectError(await t.api.post(`/campaigns/${id}/pause`), 409, 'invalid_state')
    expect(err(await t.api.post(`/campaigns/${id}/pause`)).message).toContain('draft')

    const started = await t.api.post(`/campaigns/${id}/start`)
    expect(started.status, started.text).toBe(200)
    expect(keysOf(started.body)).toEqual([...KEYS].sort())
    expect(started.body).toMatchObject({
      status: 'running',
      started_at: expect.stringMatching(ISO),
      finished_at: null,
      progress: { ...ZERO, total: 3, pending: 3 },
    })
    const progress = await t.api.get(`/campaigns/${id}/progress`)
    const { meta: _m, ...p } = progress.body
    expect(p).toEqual({ ...ZERO, total: 3, pending: 3 })

    const contacts = await t.api.get(`/campaigns/${id}/contacts`)
    expect(contacts.status, contacts.text).toBe(200)
    expect(contacts.body.data).toHaveLength(3)
    for (const row of contacts.body.data) {
      expect(Object.keys(row).sort()).toEqual([...CONTACT_KEYS].sort())
      expect(row).toMatchObject({
        item_id: expect.stringMatching(/^itm_\d+$/),
        status: 'pending',
        attempts: 0,
        last_call_id: null,
        outcome: null,
        next_attempt_at: null,
      })
    }
    // Item order is the list's import order.
    expect(contacts.body.data.map((r: any) => r.phone_e164)).toEqual(list!.phones)
    const items = (await t.api.get(`/lists/${list!.id}/items`)).body.data.map((i: any) => i.item_id)
    expect(contacts.body.data.map((r: any) => r.item_id).sort()).toEqual([...items].sort())

    expectError(await t.api.post(`/campaigns/${id}/start`), 409, 'invalid_state')
    expect(err(await t.api.post(`/campaigns/${id}/start`)).message).toContain('running')

    const paused = await t.api.post(`/campaigns/${id}/pause`)
    expect(paused.status, paused.text).toBe(200)
    expect(paused.body.status).toBe('paused')
    expectError(await t.api.post(`/campaigns/${id}/pause`), 409, 'invalid_state')

    const resumed = await t.api.post(`/campaigns/${id}/start`)
    expect(resumed.status, resumed.text).toBe(200)
    expect(resumed.body).toMatchObject({ status: 'running', started_at: started.body.started_at })
    // A resume copies nothing again.
    expect(resumed.body.progress).toEqual({ ...ZERO, total: 3, pending: 3 })

    const stopped = await t.api.post(`/campaigns/${id}/stop`)
    expect(stopped.status, stopped.text).toBe(200)
    expect(stopped.body).toMatchObject({ status: 'stopped', finished_at: expect.stringMatching(ISO) })
    for (const action of ['start', 'pause', 'stop']) {
      const r = await t.api.post(`/campaigns/${id}/${action}`)
      expectError(r, 409, 'invalid_state')
      expect(err(r).message).toContain('stopped')
    }
    expect((await t.api.get(`/campaigns/${id}`)).body.status).toBe('stopped')

    // paused → stopped, and draft → stopped.
    const second = (await newCampaign()).campaign.campaign_id
    expect((await t.api.post(`/campaigns/${second}/start`)).status).toBe(200)
    expect((await t.api.post(`/campaigns/${second}/pause`)).status).toBe(200)
    expect((await t.api.post(`/campaigns/${second}/stop`)).body.status).toBe('stopped')
    const draft = (await newCampaign()).campaign.campaign_id
    const dropped = await t.api.post(`/campaigns/${draft}/stop`)
    expect(dropped.body).toMatchObject({ status: 'stopped', started_at: null, finished_at: expect.stringMatching(ISO) })
    expect(dropped.body.progress).toEqual(ZERO)
    expectError(await t.api.post('/campaigns/cmp_999999999/start'), 404, 'not_found')
  })

  it('completes at once when the list is empty', async () => {
    verifies('outbound.campaigns-transitions')
    const list = await newList(0)
    const { campaign } = await newCampaign({ list_id: list.id })
    const r = await t.api.post(`/campaigns/${campaign.campaign_id}/start`)
    expect(r.status, r.text).toBe(200)
    expect(r.body).toMatchObject({
      status: 'completed',
      started_at: expect.stringMatching(ISO),
      finished_at: expect.stringMatching(ISO),
      progress: ZERO,
    })
    for (const action of ['start', 'pause', 'stop']) {
      const e = await t.api.post(`/campaigns/${campaign.campaign_id}/${action}`)
      expectError(e, 409, 'invalid_state')
      expect(err(e).message).toContain('completed')
    }
  })

  it('lets one of two concurrent starts win', async () => {
    verifies('outbound.campaigns-transitions')
    const { campaign } = await newCampaign()
    const id = campaign.campaign_id
    const [a, b] = await Promise.all([t.api.post(`/campaigns/${id}/start`), t.api.post(`/campaigns/${id}/start`)])
    expect([a.status, b.status].sort()).toEqual([200, 409])
    const p = (await t.api.get(`/campaigns/${id}/progress`)).body
    expect(p.total).toBe(3)
    expect(p.pending).toBe(3)
  })

  it('pages contacts by item and filters them by status', async () => {
    verifies('outbound.campaigns')
    const list = await newList(5)
    const { campaign } = await newCampaign({ list_id: list.id })
    const id = campaign.campaign_id
    expect((await t.api.post(`/campaigns/${id}/start`)).status).toBe(200)
    const first = await t.api.get(`/campaigns/${id}/contacts?limit=2`)
    expect(first.status, first.text).toBe(200)
    expect(first.body.pagination).toMatchObject({ limit: 2, has_more: true })
    const seen = [...first.body.data]
    let cursor = first.body.pagination.next_cursor
    while (cursor) {
      const page = await t.api.get(`/campaigns/${id}/contacts?limit=2&cursor=${encodeURIComponent(cursor)}`)
      expect(page.status, page.text).toBe(200)
      seen.push(...page.body.data)
      cursor = page.body.pagination.next_cursor
    }
    expect(seen.map((r) => r.phone_e164)).toEqual(list.phones)
    expect((await t.api.get(`/campaigns/${id}/contacts?status=pending&limit=1000`)).body.data).toHaveLength(5)
    expect((await t.api.get(`/campaigns/${id}/contacts?status=failed`)).body.data).toEqual([])
    expectError(
      await t.api.get(
        `/campaigns/${id}/contacts?status=pending&limit=2&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`,
      ),
      400,
      'invalid_cursor',
    )
    expectError(await t.api.get(`/campaigns/${id}/contacts?status=done`), 400, 'unsupported_filter', 'status')
    expectError(await t.api.get(`/campaigns/${id}/contacts?limit=1001`), 400, 'invalid_limit')
  })

  it("keeps tenants apart: another account's campaign, agent, profile and list are 404", async () => {
    verifies('outbound.campaigns-isolation', 'tenancy.isolation')
    const { campaign } = await newCampaign()
    const id = campaign.campaign_id
    expectError(await other.api.get(`/campaigns/${id}`), 404, 'not_found')
    expectError(await other.api.get(`/campaigns/${id}/progress`), 404, 'not_found')
    expectError(await other.api.get(`/campaigns/${id}/contacts`), 404, 'not_found')
    for (const action of ['start', 'pause', 'stop'])
      expectError(await other.api.post(`/campaigns/${id}/${action}`), 404, 'not_found')
    expect((await t.api.get(`/campaigns/${id}`)).body.status).toBe('draft')
    expect((await other.api.get('/campaigns?limit=100')).body.data.map((c: any) => c.campaign_id)).not.toContain(id)

    const list = await newList(0)
    const body = { agent_id: agent, profile_id: profile, list_id: list.id, name: 'x', schedule: CLOSED() }
    expectError(await other.api.post('/campaigns', body), 404, 'agent_not_found')
    expectError(await t.api.post('/campaigns', { ...body, agent_id: otherAgent }), 404, 'agent_not_found')
    expectError(await t.api.post('/campaigns', { ...body, profile_id: otherProfile }), 404, 'not_found')
    expectError(await t.api.post('/campaigns', { ...body, list_id: otherList }), 404, 'not_found')
  })

  it('reads need outbound:read and writes outbound:write', async () => {
    verifies('outbound.campaigns-isolation')
    const { campaign, list } = await newCampaign()
    const id = campaign.campaign_id
    const reader = await master.post(`/users/${t.userId}/credentials`, { name: 'reader', scopes: ['outbound:read'] })
    const r = createApi(base, reader.body.secret)
    for (const path of ['/campaigns', `/campaigns/${id}`, `/campaigns/${id}/progress`, `/campaigns/${id}/contacts`])
      expect((await r.get(path)).status, path).toBe(200)
    const body = { agent_id: agent, profile_id: profile, list_id: list!.id, name: 'x', schedule: CLOSED() }
    expectError(await r.post('/campaigns', body), 403, 'insufficient_scope')
    for (const action of ['start', 'pause', 'stop'])
      expectError(await r.post(`/campaigns/${id}/${action}`), 403, 'insufficient_scope')
    const agentsOnly = await master.post(`/users/${t.userId}/credentials`, { name: 'agents', scopes: ['agents:read'] })
    const a = createApi(base, agentsOnly.body.secret)
    for (const path of ['/campaigns', `/campaigns/${id}`, `/campaigns/${id}/progress`, `/campaigns/${id}/contacts`])
      expectError(await a.get(path), 403, 'insufficient_scope')
    expect((await t.api.get(`/campaigns/${id}`)).body.status).toBe('draft')
  })
})
