// Outbound profiles over HTTP against the shared server: create (every field, status draft), list with a
// cursor, read, patch (back to draft), clone, build (202, then ready with a prompt version; 409 while one
// is queued or running), capabilities validation, unknown keys, empty patch, tenant isolation and scopes.
// Then fillProfile as a unit: filled role and greeting, missing_variable naming the field, bounded input.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, type ApiResponse, expectError } from '../helpers/api'
import { startSeededServer, type SeededServer } from '../helpers/agents'
import { buildAgent } from '../helpers/build'
import { withDatabase } from '../helpers/db'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'
import { fillProfile, placeholdersOf } from '~/domain/profiles/placeholders'
import { loadProfileForCall } from '~/domain/profiles/profiles'
import type { ApiError } from '~/lib/errors'

const KEYS = [
  'profile_id',
  'agent_id',
  'name',
  'role',
  'goal',
  'greeting',
  'variables',
  'capabilities',
  'max_call_duration_s',
  'status',
  'prompt_version',
  'created_at',
  'updated_at',
]
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

const BODY = {
  name: 'Renewals',
  role: 'the renewals assistant of Harbour Taxis calling {{first_name}} about plan {{plan}}',
  goal: 'Book a renewal appointment.',
  greeting: 'Hi {{first_name}}, this is Harbour Taxis.',
  capabilities: ['lead_capture'],
  max_call_duration_s: 300,
}

describe('outbound profiles (shared server)', () => {
  const base = inject('base')
  const master = createApi(base, inject('masterKey'))
  let t: Tenant
  let other: Tenant
  let site: TestSite
  let agent: string
  let otherAgent: string
  let outboundCap: string

  beforeAll(async () => {
    site = await serveSite({
      '/': {
        body: html(
          'Harbour Taxis',
          '<h1>Harbour Taxis</h1><p>Harbour Taxis drives people around Hobart. Renewals are due every year.</p>',
        ),
      },
    })
    ;[t, other] = await Promise.all([createTenant(master), createTenant(master)])
    ;[agent, otherAgent] = await Promise.all([
      buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' }),
      buildAgent(other.api, other.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' }),
    ])
    const caps = await t.api.get('/outbound-capabilities')
    outboundCap = caps.body.data[0].name
    BODY.capabilities = [outboundCap]
  }, 90_000)
  afterAll(async () => {
    await site?.close()
  })

  const create = (body: Record<string, unknown> = BODY, api = t.api, agt = agent) =>
    api.post(`/agents/${agt}/profiles`, body)

  it('creates a profile with every field in draft, reads, patches it back to draft and clones it', async () => {
    verifies('outbound.profiles', 'outbound.profiles-variables')
    const c = await create()
    expect(c.status, c.text).toBe(201)
    expect(
      Object.keys(c.body)
        .filter((k) => k !== 'meta')
        .sort(),
    ).toEqual([...KEYS].sort())
    expect(c.body).toMatchObject({
      profile_id: expect.stringMatching(/^prf_\d+$/),
      agent_id: agent,
      name: 'Renewals',
      role: BODY.role,
      goal: BODY.goal,
      greeting: BODY.greeting,
      variables: ['first_name', 'plan'],
      capabilities: [outboundCap],
      max_call_duration_s: 300,
      status: 'draft',
      prompt_version: null,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
    const id = c.body.profile_id

    // Defaults: optional fields null or empty.
    const minimal = await create({ name: 'Bare', role: 'a caller' })
    expect(minimal.status, minimal.text).toBe(201)
    expect(minimal.body).toMatchObject({
      goal: null,
      greeting: null,
      variables: [],
      capabilities: [],
      max_call_duration_s: 600,
      status: 'draft',
    })

    const r = await t.api.get(`/profiles/${id}`)
    expect(r.status).toBe(200)
    expect(r.body.profile_id).toBe(id)

    // A name-only patch keeps the status; role changes variables.
    const p1 = await t.api.patch(`/profiles/${id}`, { name: 'Renewals 2026', role: 'a caller for {{company}}' })
    expect(p1.status, p1.text).toBe(200)
    expect(p1.body).toMatchObject({ name: 'Renewals 2026', variables: ['company', 'first_name'], status: 'draft' })

    expectError(await t.api.patch(`/profiles/${id}`, {}), 400, 'empty_update')
    expectError(await t.api.patch(`/profiles/${id}`, { variables: ['x'] }), 400, 'unsupported_field', 'variables')
    expectError(await create({ ...BODY, status: 'ready' }), 400, 'unsupported_field', 'status')
    expectError(await create({ ...BODY, name: '' }), 400, 'validation_error', 'name')
    expectError(await create({ name: 'x' }), 400, 'validation_error', 'role')
    expectError(await create({ ...BODY, max_call_duration_s: 5 }), 400, 'validation_error', 'max_call_duration_s')
    expectError(await create({ ...BODY, role: 'x'.repeat(8001) }), 400, 'validation_error', 'role')

    const cl = await t.api.post(`/profiles/${id}/clone`, {})
    expect(cl.status, cl.text).toBe(201)
    expect(cl.body).toMatchObject({
      name: 'Renewals 2026 (copy)',
      agent_id: agent,
      role: 'a caller for {{company}}',
      status: 'draft',
      prompt_version: null,
      variables: ['company', 'first_name'],
      capabilities: [outboundCap],
    })
    expect(cl.body.profile_id).not.toBe(id)
  })

  it('has no voicemail_message; voicemail_policy is hang_up only (400 unsupported_policy otherwise)', async () => {
    verifies('behaviour.voicemail-policy')
    expectError(
      await create({ ...BODY, voicemail_message: 'Please call us back.' }),
      400,
      'unsupported_field',
      'voicemail_message',
    )
    expectError(
      await create({ ...BODY, voicemail_policy: 'leave_message' }),
      400,
      'unsupported_policy',
      'voicemail_policy',
    )
    expectError(await create({ ...BODY, voicemail_policy: 7 }), 400, 'unsupported_policy', 'voicemail_policy')
    const c = await create({ ...BODY, voicemail_policy: 'hang_up' })
    expect(c.status, c.text).toBe(201)
    expect(c.body).not.toHaveProperty('voicemail_message')
    const id = c.body.profile_id
    expectError(
      await t.api.patch(`/profiles/${id}`, { voicemail_message: 'Call back.' }),
      400,
      'unsupported_field',
      'voicemail_message',
    )
    expectError(
      await t.api.patch(`/profiles/${id}`, { voicemail_policy: 'beep' }),
      400,
      'unsupported_policy',
      'voicemail_policy',
    )
    const p = await t.api.patch(`/profiles/${id}`, { voicemail_policy: 'hang_up' })
    expect(p.status, p.text).toBe(200)
    // hang_up changes nothing the profile runs: the built prompt still matches.
    expect(p.body).toMatchObject({ status: 'draft', name: BODY.name })
    expect(p.body).not.toHaveProperty('voicemail_message')
    expect((await t.api.get(`/profiles/${id}`)).body).not.toHaveProperty('voicemail_message')
  })

  it('refuses capabilities that are not installed outbound capabilities', async () => {
    verifies('outbound.profiles-capabilities')
    const all = (await t.api.get('/capabilities')).body.data.map((c: any) => c.name) as string[]
    const outbound = (await t.api.get('/outbound-capabilities')).body.data.map((c: any) => c.name) as string[]
    expectError(await create({ ...BODY, capabilities: ['no_such_thing'] }), 400, 'validation_error', 'capabilities')
    const inboundOnly = all.find((n) => !outbound.includes(n))
    if (inboundOnly) {
      expectError(await create({ ...BODY, capabilities: [inboundOnly] }), 400, 'validation_error', 'capabilities')
    }
    const c = await create({ ...BODY, capabilities: [outbound[0], outbound[0]] })
    expect(c.status).toBe(201)
    expect(c.body.capabilities).toEqual([outbound[0]])
    expectError(
      await t.api.patch(`/profiles/${c.body.profile_id}`, { capabilities: ['no_such_thing'] }),
      400,
      'validation_error',
      'capabilities',
    )
  })

  it('lists an agent profiles newest first with a cursor', async () => {
    verifies('outbound.profiles')
    const made: string[] = []
    for (let i = 0; i < 3; i++) made.push((await create({ name: `List ${i}`, role: 'a caller' })).body.profile_id)
    const seen: string[] = []
    let cursor: string | null = null
    for (let page = 0; page < 20; page++) {
      const r: ApiResponse = await t.api.get(
        `/agents/${agent}/profiles?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      )
      expect(r.status, r.text).toBe(200)
      expect(r.body.pagination.limit).toBe(2)
      seen.push(...r.body.data.map((p: any) => p.profile_id))
      cursor = r.body.pagination.next_cursor
      if (!r.body.pagination.has_more) break
    }
    expect(new Set(seen).size).toBe(seen.length)
    // Newest first: the three just made lead the list in reverse order.
    expect(seen.slice(0, 3)).toEqual([...made].reverse())
    expectError(await t.api.get(`/agents/${agent}/profiles?cursor=garbage`), 400, 'invalid_cursor')
    expectError(await t.api.get(`/agents/${agent}/profiles?color=red`), 400, 'unsupported_filter')
  })

  it('builds a profile: 202 with one instructions step, 409 while running, then ready with a prompt version; a patch sets it back to draft', async () => {
    verifies('outbound.profiles-build', 'outbound.profiles')
    // Builds asked at once: one decided while the first is queued or running is 409. The queue starts a job the
    // moment it is sent and the local engine writes in milliseconds; on the embedded database (one connection,
    // statements in turn) the first build is over before the second request is decided, so there both are 202
    // and the second is build 2. PostgreSQL decides them side by side: 202 and 409.
    let id = (await create()).body.profile_id
    expectError(await t.api.get(`/profiles/${id}/build`), 404, 'not_found')
    const [a, b] = await Promise.all([t.api.post(`/profiles/${id}/build`, {}), t.api.post(`/profiles/${id}/build`, {})])
    const statuses = [a.status, b.status].sort()
    let accepted: ApiResponse
    if (!process.env.DATABASE_URL && statuses[1] === 202) {
      expect([a.body.build_number, b.body.build_number].sort()).toEqual([1, 2])
      // The rest of the story on a profile of its own, built once.
      id = (await create()).body.profile_id
      accepted = await t.api.post(`/profiles/${id}/build`, {})
    } else {
      expect(statuses, `${a.text} ${b.text}`).toEqual([202, 409])
      accepted = a.status === 202 ? a : b
      expectError(a.status === 409 ? a : b, 409, 'build_in_progress')
    }
    expect(accepted.status, accepted.text).toBe(202)
    expect(accepted.body).toMatchObject({
      build_id: expect.stringMatching(/^bld_\d+$/),
      agent_id: agent,
      profile_id: id,
      build_number: 1,
      status: 'queued',
      from_step: 'instructions',
      steps: [{ name: 'instructions', status: 'queued' }],
    })
    const done = await until(
      'profile build',
      async () => {
        const r = await t.api.get(`/profiles/${id}/build`)
        return r.body.status === 'succeeded' || r.body.status === 'failed' ? r.body : null
      },
      45_000,
    )
    expect(done.status, JSON.stringify(done.steps)).toBe('succeeded')
    expect(done.steps[0]).toMatchObject({ name: 'instructions', status: 'succeeded', error: null })
    const p = await t.api.get(`/profiles/${id}`)
    expect(p.body).toMatchObject({ status: 'ready', prompt_version: 'build-1' })

    // Not a prompt field: stays ready. A goal change: back to draft, prompt_version kept.
    expect((await t.api.patch(`/profiles/${id}`, { max_call_duration_s: 120 })).body.status).toBe('ready')
    const stale = await t.api.patch(`/profiles/${id}`, { goal: 'Confirm the renewal date.' })
    expect(stale.body).toMatchObject({ status: 'draft', prompt_version: 'build-1' })

    const again = await t.api.post(`/profiles/${id}/build`, {})
    expect(again.status, again.text).toBe(202)
    expect(again.body.build_number).toBe(2)
    await until('second build', async () => (await t.api.get(`/profiles/${id}`)).body.status === 'ready', 45_000)
    expect((await t.api.get(`/profiles/${id}`)).body.prompt_version).toBe('build-2')
  }, 120_000)

  it("another account's profile or agent is 404; reads need outbound:read and writes outbound:write", async () => {
    verifies('outbound.profiles-isolation')
    const mine = (await create()).body.profile_id
    const theirs = (await create(BODY, other.api, otherAgent)).body.profile_id
    expectError(await t.api.get(`/profiles/${theirs}`), 404, 'not_found')
    expectError(await t.api.patch(`/profiles/${theirs}`, { name: 'x' }), 404, 'not_found')
    expectError(await t.api.post(`/profiles/${theirs}/clone`, {}), 404, 'not_found')
    expectError(await t.api.post(`/profiles/${theirs}/build`, {}), 404, 'not_found')
    expectError(await t.api.get(`/profiles/${theirs}/build`), 404, 'not_found')
    expectError(await create(BODY, t.api, otherAgent), 404, 'agent_not_found')
    expectError(await t.api.get(`/agents/${otherAgent}/profiles`), 404, 'agent_not_found')
    expectError(await t.api.get('/profiles/prf_999999999'), 404, 'not_found')
    expectError(await t.api.get('/profiles/nope'), 400, 'invalid_id')
    expect((await other.api.get(`/profiles/${theirs}`)).body.name).toBe('Renewals')

    const reader = await master.post(`/users/${t.userId}/credentials`, { name: 'reader', scopes: ['outbound:read'] })
    const r = createApi(base, reader.body.secret)
    expect((await r.get(`/agents/${agent}/profiles`)).status).toBe(200)
    expect((await r.get(`/profiles/${mine}`)).status).toBe(200)
    expectError(await r.post(`/agents/${agent}/profiles`, BODY), 403, 'insufficient_scope')
    expectError(await r.patch(`/profiles/${mine}`, { name: 'x' }), 403, 'insufficient_scope')
    expectError(await r.post(`/profiles/${mine}/clone`, {}), 403, 'insufficient_scope')
    expectError(await r.post(`/profiles/${mine}/build`, {}), 403, 'insufficient_scope')
    const agentsOnly = await master.post(`/users/${t.userId}/credentials`, {
      name: 'agents only',
      scopes: ['agents:read', 'agents:write'],
    })
    const n = createApi(base, agentsOnly.body.secret)
    expectError(await n.get(`/agents/${agent}/profiles`), 403, 'insufficient_scope')
    expectError(await n.get(`/profiles/${mine}`), 403, 'insufficient_scope')
    expectError(await n.get(`/profiles/${mine}/build`), 403, 'insufficient_scope')
  })
})

describe('the built prompt (a server of its own, read from its database)', () => {
  let seeded: SeededServer<{ a: Tenant }>
  beforeAll(async () => {
    seeded = await startSeededServer({
      prepare: async (m) => ({ a: await createTenant(m) }),
      agents: (p) => [{ accountId: p.a.accountId, agentType: 'phone' }],
    })
  }, 90_000)
  afterAll(async () => {
    await seeded?.server.stop('SIGKILL')
  })

  it("writes the prompt from the role, the goal and the agent's knowledge summary; fillProfile fills it for a call", async () => {
    verifies('outbound.profiles-build', 'outbound.profiles-variables')
    const a = seeded.as(seeded.prepared.a.key)
    const [agent] = seeded.agentIds
    const sum = await a.patch(`/agents/${agent}/kb/summary`, {
      text: 'Zephyr Plumbing fixes burst pipes across Oslo within two hours, every day of the week.',
    })
    expect(sum.status, sum.text).toBe(200)
    const c = await a.post(`/agents/${agent}/profiles`, {
      name: 'Follow-up',
      role: 'the follow-up caller for {{first_name}}',
      goal: 'Confirm the repair visit.',
      greeting: 'Hello {{first_name}}',
    })
    expect(c.status, c.text).toBe(201)
    const id = c.body.profile_id
    expect((await a.post(`/profiles/${id}/build`, {})).status).toBe(202)
    await until('profile ready', async () => (await a.get(`/profiles/${id}`)).body.status === 'ready', 45_000)
    await seeded.server.stop('SIGTERM')
    await withDatabase(seeded.server.dataDir, async (db) => {
      const { profile, prompt } = await loadProfileForCall(db.db, seeded.prepared.a.accountId, id)
      expect(profile.promptVersion).toBe('build-1')
      expect(prompt).toContain('the follow-up caller for {{first_name}}')
      expect(prompt).toContain('Goal of this call: Confirm the repair visit.')
      expect(prompt).toContain('burst pipes')
      const filled = fillProfile({ role: profile.role, greeting: profile.greeting, prompt }, { first_name: 'Ola' })
      expect(filled.greeting).toBe('Hello Ola')
      expect(filled.prompt).toContain('the follow-up caller for Ola')
      expect(filled.prompt).not.toContain('{{')
    })
  }, 120_000)
})

describe('fillProfile', () => {
  const profile = {
    role: 'the caller for {{company}} speaking to {{first_name}}',
    greeting: 'Hi {{first_name}}!',
    prompt: 'You are the caller for {{company}}. Greet {{first_name}}. {{not a variable}} {{Upper}}',
  }

  it('fills role, greeting and prompt; a missing variable is missing_variable naming it', () => {
    verifies('outbound.profiles-variables')
    const out = fillProfile(profile, { company: 'Harbour Taxis', first_name: 'Ada', extra: 'ignored' })
    expect(out).toEqual({
      role: 'the caller for Harbour Taxis speaking to Ada',
      greeting: 'Hi Ada!',
      prompt: 'You are the caller for Harbour Taxis. Greet Ada. {{not a variable}} {{Upper}}',
    })
    // Without a built prompt, the prompt is the filled role; a null greeting stays null.
    expect(fillProfile({ role: '{{a}}', greeting: null }, { a: 'x' })).toEqual({
      role: 'x',
      greeting: null,
      prompt: 'x',
    })
    let e: ApiError | undefined
    try {
      fillProfile(profile, { company: 'Harbour Taxis' })
    } catch (x) {
      e = x as ApiError
    }
    expect(e?.code).toBe('missing_variable')
    expect(e?.status).toBe(400)
    expect(e?.field).toBe('variables.first_name')
    // A value is not itself scanned for placeholders.
    expect(fillProfile({ role: '{{a}}', greeting: null }, { a: '{{b}}' }).role).toBe('{{b}}')
    expect(placeholdersOf('{{a}} {{b}} {{a}} {{ c }} {{9x}}', '{{d_1}}')).toEqual(['a', 'b', 'd_1'])
  })

  it('stays bounded on huge input', () => {
    verifies('outbound.profiles-variables')
    const huge = '{{'.repeat(1_000_000) + 'a'.repeat(1_000_000)
    const t0 = Date.now()
    expect(() => fillProfile({ role: huge, greeting: null }, {})).toThrow(/role/)
    expect(() => fillProfile({ role: 'x', greeting: null }, { x: 'y' })).not.toThrow()
    expect(() => fillProfile({ role: '{{x}}', greeting: null }, { x: 'y'.repeat(5000) })).toThrow(/variables\.x/)
    // A long role within bounds full of near-placeholders scans linearly.
    const near = '{{a'.repeat(2600)
    expect(placeholdersOf(near)).toEqual([])
    expect(placeholdersOf('{'.repeat(2_000_000) + 'a'.repeat(64) + '}}')).toEqual(['a'.repeat(64)])
    expect(placeholdersOf('{{' + 'a'.repeat(65) + '}}')).toEqual([])
    expect(Date.now() - t0).toBeLessThan(3000)
  })
})
