// Outbound calls over HTTP against the shared server on the simulated network (numbers ending 0000 do not
// answer, 9999 fail, 8888 reach an answering machine, 7777 ring for 20 s): a profile's call answered and
// talked through (its filled greeting, a phone_outbound conversation linked from the call), no answer,
// failure, an answering machine hung up on at once (hang_up, the only voicemail policy), cancel, the queue above max_concurrent_calls, the daily
// quota, the do-not-call check, every validation error, lists and filters, tenant isolation and scopes,
// and the call.* webhooks at a local receiver, signed.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, expectError } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { startReceiver, type Receiver } from '../helpers/receiver'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'
import { verifyWebhook } from '~/domain/webhooks/verify'

const KEYS = [
  'call_id',
  'account_id',
  'agent_id',
  'profile_id',
  'campaign_id',
  'direction',
  'from',
  'to',
  'status',
  'outcome',
  'conversation_id',
  'failure_reason',
  'variables',
  'started_at',
  'answered_at',
  'ended_at',
  'duration_s',
  'created_at',
  'updated_at',
]
const CALLEE_REPLY = 'Yes, that works for me. Thank you, goodbye.'

/** A number of this test process ending in `tail` (so parallel runs on one database do not collide). */
let seq = 0
const num = (tail: string) => `+1646${200 + ((process.pid * 7 + seq++) % 800)}${tail}`

describe('outbound calls (simulated network)', () => {
  const base = inject('base')
  const master = createApi(base, inject('masterKey'))
  let t: Tenant
  let other: Tenant
  let site: TestSite
  let rx: Receiver
  let agent: string
  let otherAgent: string
  let profile: string
  let otherProfile: string
  let secret: string

  beforeAll(async () => {
    site = await serveSite({
      '/': { body: html('Harbour Taxis', '<h1>Harbour Taxis</h1><p>Harbour Taxis drives people around Hobart.</p>') },
    })
    rx = await startReceiver()
    ;[t, other] = await Promise.all([createTenant(master), createTenant(master)])
    ;[agent, otherAgent] = await Promise.all([
      buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' }),
      buildAgent(other.api, other.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' }),
    ])
    const p = await t.api.post(`/agents/${agent}/profiles`, {
      name: 'Renewals',
      role: 'the renewals assistant of Harbour Taxis calling {{first_name}}',
      goal: 'Confirm the renewal.',
      greeting: 'Hi {{first_name}}, this is Harbour Taxis about your renewal.',
    })
    expect(p.status, p.text).toBe(201)
    profile = p.body.profile_id
    const op = await other.api.post(`/agents/${otherAgent}/profiles`, { name: 'Theirs', role: 'a caller' })
    otherProfile = op.body.profile_id
    const n = await t.api.post('/phone-numbers', { e164: num('1234'), agent_id: agent })
    expect(n.status, n.text).toBe(201)
    const hook = await t.api.post('/webhooks/endpoints', {
      url: rx.url('/calls'),
      events: ['call.completed', 'call.no_answer', 'call.failed'],
    })
    expect(hook.status, hook.text).toBe(201)
    secret = hook.body.secret
  }, 120_000)
  afterAll(async () => {
    await site?.close()
    await rx?.close()
  })

  const place = (body: Record<string, unknown>, api = t.api) => api.post('/calls', body)
  const settled = (id: string, api = t.api) =>
    until(
      `call ${id} to end`,
      async () => {
        const r = await api.get(`/calls/${id}`)
        return ['completed', 'no_answer', 'failed', 'canceled'].includes(r.body.status) ? r.body : null
      },
      60_000,
    )

  it('places a profile call: ringing, answered, the filled greeting, a phone_outbound conversation, completed', async () => {
    verifies('outbound.calls', 'outbound.calls-conversation')
    const to = num('2345')
    const r = await place({ agent_id: agent, to, profile_id: profile, variables: { first_name: 'Ada' } })
    expect(r.status, r.text).toBe(201)
    // POST /calls is metered in the calls class (lifted to 100000 for the suite), not write.
    expect(r.headers.get('ratelimit-policy')).toMatch(/^"calls";/)
    expect(
      Object.keys(r.body)
        .filter((k) => k !== 'meta')
        .sort(),
    ).toEqual([...KEYS].sort())
    expect(r.body).toMatchObject({
      call_id: expect.stringMatching(/^call_\d+$/),
      account_id: t.accountId,
      agent_id: agent,
      profile_id: profile,
      campaign_id: null,
      direction: 'outbound',
      to,
      from: expect.stringMatching(/^\+1646/),
      status: 'ringing',
      variables: { first_name: 'Ada' },
    })
    const call = await settled(r.body.call_id)
    expect(call).toMatchObject({ status: 'completed', outcome: 'answered', failure_reason: null })
    expect(call.conversation_id).toMatch(/^conv_u\d+$/)
    expect(Date.parse(call.answered_at)).toBeGreaterThanOrEqual(Date.parse(call.started_at))
    expect(Date.parse(call.ended_at)).toBeGreaterThanOrEqual(Date.parse(call.answered_at))
    expect(call.duration_s).toBeGreaterThanOrEqual(1)

    const conv = await until(
      'the conversation to complete',
      async () => {
        const c = await t.api.get(`/conversations/${call.conversation_id}?include=transcript,identity`)
        return c.body.status === 'completed' ? c.body : null
      },
      30_000,
    )
    expect(conv.channel_detail).toMatchObject({ channel: 'phone_outbound' })
    expect(conv.identity).toMatchObject({ phone_e164: to })
    const turns = conv.transcript as any[]
    expect(turns[0]).toMatchObject({
      speaker: 'agent',
      turn_type: 'greeting',
      text: 'Hi Ada, this is Harbour Taxis about your renewal.',
    })
    expect(turns.find((x) => x.speaker === 'visitor')?.text).toBe(CALLEE_REPLY)
    expect(turns.filter((x) => x.speaker === 'agent' && x.turn_type === 'answer').length).toBeGreaterThanOrEqual(1)

    // The call.completed webhook carries the Call, signed.
    const got = await rx.waitFor(
      (all) => all.some((x) => x.json?.type === 'call.completed' && x.json.data.call_id === call.call_id),
      'call.completed',
      20_000,
    )
    const hit = got.find((x) => x.json?.type === 'call.completed' && x.json.data.call_id === call.call_id)!
    expect(verifyWebhook({ secret, body: hit.body, headers: hit.headers })).toBe(true)
    expect(hit.json.data).toMatchObject({
      call_id: call.call_id,
      status: 'completed',
      conversation_id: call.conversation_id,
    })
  })

  it('no answer, failure and an answering machine end as no_answer, failed and completed/voicemail (hung up at once), each with its event', async () => {
    verifies('outbound.calls', 'outbound.calls-events', 'outbound.calls-voicemail', 'behaviour.voicemail-policy')
    const vars = { first_name: 'Bo' }
    const [na, fail, vm, hangUp] = await Promise.all([
      place({ agent_id: agent, to: num('0000'), profile_id: profile, variables: vars }),
      place({ agent_id: agent, to: num('9999'), profile_id: profile, variables: vars }),
      place({ agent_id: agent, to: num('8888'), profile_id: profile, variables: vars }),
      place({ agent_id: agent, to: num('8888'), profile_id: profile, variables: vars, voicemail_policy: 'hang_up' }),
    ])
    for (const r of [na, fail, vm, hangUp]) expect(r.status, r.text).toBe(201)
    expect(await settled(na.body.call_id)).toMatchObject({
      status: 'no_answer',
      outcome: 'no_answer',
      conversation_id: null,
    })
    expect(await settled(fail.body.call_id)).toMatchObject({ status: 'failed', outcome: 'failed' })
    // hang_up is the default and the only policy: the machine hears nothing, not even the greeting.
    for (const placed of [vm, hangUp]) {
      const call = await settled(placed.body.call_id)
      expect(call).toMatchObject({ status: 'completed', outcome: 'voicemail' })
      const c = await t.api.get(`/conversations/${call.conversation_id}?include=transcript`)
      expect(c.body.transcript).toEqual([])
    }

    const events = await rx.waitFor(
      (all) =>
        ['call.no_answer', 'call.failed'].every((type) =>
          all.some((x) => x.json?.type === type && [na.body.call_id, fail.body.call_id].includes(x.json.data.call_id)),
        ),
      'call.no_answer and call.failed',
      20_000,
    )
    for (const [type, id] of [
      ['call.no_answer', na.body.call_id],
      ['call.failed', fail.body.call_id],
    ]) {
      const hit = events.find((x) => x.json?.type === type && x.json.data.call_id === id)!
      expect(hit.headers['x-svc-event']).toBe(type)
      expect(verifyWebhook({ secret, body: hit.body, headers: hit.headers })).toBe(true)
    }
  })

  it('an inline role call runs without a profile; bad bodies are refused with their codes', async () => {
    verifies('outbound.calls-validation', 'behaviour.voicemail-policy')
    const inline = await place({
      agent_id: agent,
      to: num('3456'),
      role: 'a courteous caller from Harbour Taxis for {{first_name}}',
      greeting: 'Hello {{first_name}}, Harbour Taxis here.',
      variables: { first_name: 'Cy' },
    })
    expect(inline.status, inline.text).toBe(201)
    expect(inline.body.profile_id).toBeNull()
    const done = await settled(inline.body.call_id)
    expect(done.status).toBe('completed')
    const c = await t.api.get(`/conversations/${done.conversation_id}?include=transcript`)
    expect(c.body.transcript[0].text).toBe('Hello Cy, Harbour Taxis here.')

    const ok = { agent_id: agent, to: num('4567'), profile_id: profile, variables: { first_name: 'D' } }
    expectError(await place({ ...ok, variables: {} }), 400, 'missing_variable', 'variables.first_name')
    expectError(await place({ ...ok, to: '555-1234' }), 400, 'invalid_phone', 'to')
    expectError(await place({ ...ok, role: 'x' }), 400, 'validation_error', 'role')
    expectError(await place({ agent_id: agent, to: num('4567') }), 400, 'validation_error', 'profile_id')
    expectError(await place({ ...ok, greeting: 'Hi' }), 400, 'validation_error', 'greeting')
    expectError(await place({ ...ok, voicemail_policy: 'beep' }), 400, 'unsupported_policy', 'voicemail_policy')
    expectError(
      await place({ ...ok, voicemail_policy: 'leave_message' }),
      400,
      'unsupported_policy',
      'voicemail_policy',
    )
    expectError(
      await place({ agent_id: agent, to: num('4567'), role: 'a caller', voicemail_message: 'Call back.' }),
      400,
      'unsupported_field',
      'voicemail_message',
    )
    expectError(await place({ ...ok, colour: 'red' }), 400, 'unsupported_field', 'colour')
    expectError(await place({ ...ok, from_number_id: 'num_999999999' }), 404, 'not_found')
    expectError(await place({ ...ok, agent_id: 'agt_999999999' }), 404, 'agent_not_found')
    expectError(await place({ ...ok, profile_id: 'prf_999999999' }), 404, 'not_found')
    expectError(await place({ ...ok, agent_id: 'nope' }), 400, 'invalid_id')
  })

  it("the profile's outbound capabilities fire during the call as in chat", async () => {
    verifies('outbound.capabilities-fire')
    const caps = await t.api.get('/outbound-capabilities')
    expect(caps.body.data.map((c: any) => c.name)).toContain('capture_lead')
    const p = await t.api.post(`/agents/${agent}/profiles`, {
      name: 'Leads',
      role: 'a caller from Harbour Taxis asking whether the person wants a quote',
      greeting: 'Hello, Harbour Taxis here.',
      capabilities: ['capture_lead'],
    })
    expect(p.status, p.text).toBe(201)
    const r = await place({
      agent_id: agent,
      to: num('6789'),
      profile_id: p.body.profile_id,
      variables: { simulated_reply: 'Yes please, call me back at +14155550199 tomorrow.' },
    })
    expect(r.status, r.text).toBe(201)
    const call = await settled(r.body.call_id)
    expect(call.status).toBe('completed')
    const conv = await t.api.get(`/conversations/${call.conversation_id}?include=transcript`)
    const tool = conv.body.transcript.find((x: any) => x.turn_type === 'tool')
    expect(tool, JSON.stringify(conv.body.transcript)).toBeTruthy()
    expect(tool.tool).toMatchObject({ name: 'capture_lead', arguments: { phone: '+14155550199' } })
    // A capability the profile does not carry is not offered on its calls.
    const plain = await place({
      agent_id: agent,
      to: num('6790'),
      profile_id: profile,
      variables: { first_name: 'G', simulated_reply: 'Call me back at +14155550199.' },
    })
    const plainCall = await settled(plain.body.call_id)
    const plainConv = await t.api.get(`/conversations/${plainCall.conversation_id}?include=transcript`)
    expect(plainConv.body.transcript.some((x: any) => x.turn_type === 'tool')).toBe(false)
  })

  it('a number on the do-not-call list is refused at dial time with 403 dnc_listed', async () => {
    verifies('outbound.calls-dnc')
    const to = num('5678')
    expect((await t.api.post('/dnc', { phone: to })).status).toBe(201)
    expectError(
      await place({ agent_id: agent, to, profile_id: profile, variables: { first_name: 'E' } }),
      403,
      'dnc_listed',
      'to',
    )
    // Listed for this account only.
    const n = await other.api.post('/calls', { agent_id: otherAgent, to: num('0000'), profile_id: otherProfile })
    expect(n.status, n.text).toBe(201)
  })

  it('cancels queued and ringing calls; above max_concurrent_calls a call waits queued and dials when a line frees', async () => {
    verifies('outbound.calls-cancel', 'outbound.calls-queue')
    const limits = await t.api.get(`/accounts/${t.accountId}/limits`)
    const lines = limits.body.max_concurrent_calls as number
    const body = (tail = '7777') => ({
      agent_id: agent,
      to: num(tail),
      profile_id: profile,
      variables: { first_name: 'F' },
    })
    const ringing = []
    for (let i = 0; i < lines; i++) {
      const r = await place(body())
      expect(r.status, r.text).toBe(201)
      expect(r.body.status).toBe('ringing')
      ringing.push(r.body.call_id)
    }
    const queued = await place(body())
    expect(queued.body.status).toBe('queued')
    expect(queued.body.started_at).toBeNull()
    const queued2 = await place(body())
    expect(queued2.body.status).toBe('queued')

    // Cancel a queued call: it never dials.
    const c1 = await t.api.delete(`/calls/${queued2.body.call_id}`)
    expect(c1.status, c1.text).toBe(200)
    expect(c1.body).toMatchObject({ status: 'canceled', outcome: 'canceled' })
    expect(c1.body.ended_at).not.toBeNull()
    expectError(await t.api.delete(`/calls/${queued2.body.call_id}`), 409, 'call_not_cancelable')

    // Cancel a ringing call: the queued one takes its line.
    const c2 = await t.api.delete(`/calls/${ringing[0]}`)
    expect(c2.status, c2.text).toBe(200)
    expect(c2.body.status).toBe('canceled')
    await until(
      'the queued call to ring',
      async () => ((await t.api.get(`/calls/${queued.body.call_id}`)).body.status === 'ringing' ? true : null),
      10_000,
    )
    for (const id of [...ringing.slice(1), queued.body.call_id])
      expect((await t.api.delete(`/calls/${id}`)).status).toBe(200)

    // A finished call cannot be canceled.
    const done = await place(body('0000'))
    await settled(done.body.call_id)
    expectError(await t.api.delete(`/calls/${done.body.call_id}`), 409, 'call_not_cancelable')
  })

  it('max_calls_per_day used up is 429 quota_exceeded with Retry-After', async () => {
    verifies('outbound.calls-quota')
    const q = await createTenant(master)
    const qa = await buildAgent(q.api, q.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' })
    const lim = await master.patch(`/users/${q.accountId.replace('acc_', 'usr_')}`, {
      limits: { max_calls_per_day: 1 },
    })
    expect(lim.status, lim.text).toBe(200)
    const first = await q.api.post('/calls', { agent_id: qa, to: num('0000'), role: 'a caller' })
    expect(first.status, first.text).toBe(201)
    const second = await q.api.post('/calls', { agent_id: qa, to: num('0000'), role: 'a caller' })
    expectError(second, 429, 'quota_exceeded')
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0)
    const l = await q.api.get(`/accounts/${q.accountId}/limits`)
    expect(l.body.max_calls_per_day).toBe(1)
  }, 90_000)

  it('lists calls newest first with filters and a cursor', async () => {
    verifies('outbound.calls')
    const all = await t.api.get('/calls?limit=100')
    expect(all.status, all.text).toBe(200)
    expect(all.body.data.length).toBeGreaterThan(5)
    const stamps = all.body.data.map((c: any) => Date.parse(c.created_at))
    expect([...stamps].sort((a, b) => b - a)).toEqual(stamps)
    const na = await t.api.get('/calls?status=no_answer')
    expect(na.body.data.length).toBeGreaterThan(0)
    expect(na.body.data.every((c: any) => c.status === 'no_answer')).toBe(true)
    const one = all.body.data[0]
    const byTo = await t.api.get(`/calls?to=${encodeURIComponent(one.to)}`)
    expect(byTo.body.data.every((c: any) => c.to === one.to)).toBe(true)
    expect((await t.api.get(`/calls?agent_id=${agent}`)).body.data.length).toBe(all.body.data.length)
    const p1 = await t.api.get('/calls?limit=2')
    expect(p1.body.data).toHaveLength(2)
    const p2 = await t.api.get(`/calls?limit=2&cursor=${encodeURIComponent(p1.body.pagination.next_cursor)}`)
    expect(p2.body.data[0].call_id).toBe(all.body.data[2].call_id)
    expectError(await t.api.get('/calls?status=ringing_loudly'), 400, 'unsupported_filter')
    expectError(await t.api.get('/calls?to=12'), 400, 'invalid_phone')
  })

  it("another account's calls, agents and profiles are 404; reads need outbound:read and writes outbound:write", async () => {
    verifies('outbound.calls-isolation')
    const theirs = await other.api.post('/calls', { agent_id: otherAgent, to: num('7777'), profile_id: otherProfile })
    expect(theirs.status, theirs.text).toBe(201)
    const id = theirs.body.call_id
    expectError(await t.api.get(`/calls/${id}`), 404, 'not_found')
    expectError(await t.api.delete(`/calls/${id}`), 404, 'not_found')
    expect((await t.api.get('/calls?limit=100')).body.data.some((c: any) => c.call_id === id)).toBe(false)
    expectError(await place({ agent_id: otherAgent, to: num('1111'), role: 'x' }), 404, 'agent_not_found')
    expectError(await place({ agent_id: agent, to: num('1111'), profile_id: otherProfile }), 404, 'not_found')
    expect((await other.api.get(`/calls/${id}`)).body.status).toBe('ringing')
    expect((await other.api.delete(`/calls/${id}`)).status).toBe(200)

    const reader = await master.post(`/users/${t.userId}/credentials`, { name: 'reader', scopes: ['outbound:read'] })
    expect(reader.status, reader.text).toBe(201)
    const ro = createApi(base, reader.body.secret)
    expect((await ro.get('/calls')).status).toBe(200)
    expectError(await ro.post('/calls', { agent_id: agent, to: num('1111'), role: 'x' }), 403, 'insufficient_scope')
    const writer = await master.post(`/users/${t.userId}/credentials`, { name: 'writer', scopes: ['outbound:write'] })
    const wo = createApi(base, writer.body.secret)
    expectError(await wo.get('/calls'), 403, 'insufficient_scope')
  })
})
