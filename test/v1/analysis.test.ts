// Conversation analysis over HTTP against the shared server (local engine, offline speech): the agent's
// analysis setting and its version, the analysis of an API chat and of a simulated phone call with evidence
// offsets that slice the stored turn text to each value, no value without evidence, conversation.analyzed,
// include=analysis on detail and list, redaction of values, a version bump analysed by a backfill (twice:
// nothing added), scopes and tenant isolation.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, expectError, type Api } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { freshNumber } from '../helpers/phone'
import { startReceiver, type Receiver } from '../helpers/receiver'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

const GREETING = 'Welcome to Quokka Bakery! Are you an existing customer?'
const SAID = [
  'Yes, I ordered bread last year. We would like a wedding cake for 12 guests.',
  'The party is on 2026-12-24, my email is jane.doe@example.com and my phone is +1 415 555 0100.',
]
const FIELDS = [
  { name: 'email', type: 'string', description: "The visitor's e-mail address.", required: true },
  { name: 'phone', type: 'string', description: 'A number to call back.' },
  { name: 'guests', type: 'number', description: 'How many guests the event has.' },
  { name: 'event_date', type: 'date', description: 'The day of the event.' },
  { name: 'existing_customer', type: 'boolean', description: 'Whether the visitor already bought from us.' },
  { name: 'product', type: 'enum', description: 'What they order.', enum: ['wedding cake', 'sourdough', 'croissant'] },
  { name: 'budget', type: 'number', description: 'Their budget in dollars.' },
]
const EXPECTED = {
  email: 'jane.doe@example.com',
  phone: '+1 415 555 0100',
  guests: 12,
  event_date: '2026-12-24',
  existing_customer: true,
  product: 'wedding cake',
  budget: null,
}
/** The words each value comes from, as the stored turn text holds them. */
const WORDS: Record<string, string> = {
  email: 'jane.doe@example.com',
  phone: '+1 415 555 0100',
  guests: '12',
  event_date: '2026-12-24',
  existing_customer: 'Yes',
  product: 'wedding cake',
}

/** Every value's evidence slices the stored turn text to its words; a null value has none. */
function expectEvidence(conv: any, words: Record<string, string> = WORDS) {
  const a = conv.analysis
  for (const [name, value] of Object.entries(a.values)) {
    if (value === null) {
      expect(a.evidence[name], name).toEqual([])
      continue
    }
    expect(a.evidence[name].length, name).toBeGreaterThan(0)
    for (const e of a.evidence[name]) {
      const turn = (conv.transcript as any[]).find((x) => x.turn_index === e.turn_index)
      expect(turn.text.slice(e.start, e.end), name).toBe(words[name])
    }
  }
}

describe('conversation analysis (shared server)', () => {
  const base = inject('base')
  const master = createApi(base, inject('masterKey'))
  let t: Tenant
  let other: Tenant
  let site: TestSite
  let rx: Receiver
  let agent: string
  let version: number
  let chatId: string
  let callId: string
  const TO = freshNumber()

  const analysed = (api: Api, id: string, v: number, qs = '') =>
    until(
      `conversation ${id} analysed at version ${v}`,
      async () => {
        const r = await api.get(`/conversations/${id}?include=transcript,analysis${qs}`)
        expect(r.status, r.text).toBe(200)
        return r.body.analysis?.analysis_version === v ? r.body : null
      },
      90_000,
      250,
    )
  const analyzedEvents = (id: string) =>
    rx.received.filter((x) => x.json?.type === 'conversation.analyzed' && x.json.data?.conversation_id === id)

  beforeAll(async () => {
    site = await serveSite({
      '/': {
        body: html(
          'Quokka Bakery',
          '<h1>Quokka Bakery</h1><p>Quokka Bakery bakes wedding cakes to order.</p><p>Our rye sourdough loaf costs nine dollars.</p>',
        ),
      },
    })
    rx = await startReceiver()
    t = await createTenant(master)
    other = await createTenant(master)
    agent = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    const p = await t.api.patch(`/agents/${agent}`, { greetings: { chat: { en: GREETING }, phone: { en: GREETING } } })
    expect(p.status, p.text).toBe(200)
    const num = await t.api.post('/phone-numbers', { e164: TO, agent_id: agent })
    expect(num.status, num.text).toBe(201)
    const hook = await t.api.post('/webhooks/endpoints', {
      url: rx.url('/analysis'),
      events: ['conversation.analyzed'],
    })
    expect(hook.status, hook.text).toBe(201)
  }, 180_000)
  afterAll(async () => {
    await site?.close()
    await rx?.close()
  })

  it('validates the analysis setting with field paths and bumps analysis_version per change', async () => {
    verifies('quality.analysis.setting')
    const before = (await t.api.get(`/agents/${agent}`)).body
    expect(before).toMatchObject({ analysis: null, analysis_version: 0 })
    const bad = (fields: unknown[], extra = {}) => t.api.patch(`/agents/${agent}`, { analysis: { fields, ...extra } })
    const ok = FIELDS.slice(0, 3)
    expectError(
      await bad([...ok, { name: 'Party Size', type: 'number', description: 'x' }]),
      400,
      'validation_error',
      'analysis.fields.3.name',
    )
    expectError(
      await bad([...ok, { name: 'x'.repeat(41), type: 'number', description: 'x' }]),
      400,
      'validation_error',
      'analysis.fields.3.name',
    )
    expectError(
      await bad([{ name: 'kind', type: 'enum', description: 'x' }]),
      400,
      'validation_error',
      'analysis.fields.0.enum',
    )
    expectError(
      await bad([{ name: 'kind', type: 'string', description: 'x', enum: ['a'] }]),
      400,
      'validation_error',
      'analysis.fields.0.enum',
    )
    expectError(await bad([...ok, { ...ok[1] }]), 400, 'validation_error', 'analysis.fields.3.name')
    expectError(
      await bad([{ name: 'kind', type: 'colour', description: 'x' }]),
      400,
      'validation_error',
      'analysis.fields.0.type',
    )
    expectError(
      await bad([{ name: 'kind', type: 'string', description: 'x'.repeat(501) }]),
      400,
      'validation_error',
      'analysis.fields.0.description',
    )
    const many = Array.from({ length: 26 }, (_, i) => ({ name: `f${i}`, type: 'string', description: 'x' }))
    expectError(await bad(many), 400, 'validation_error', 'analysis.fields')
    expectError(
      await bad(ok, { success_criteria: 'x'.repeat(1001) }),
      400,
      'validation_error',
      'analysis.success_criteria',
    )
    expect((await t.api.get(`/agents/${agent}`)).body.analysis_version).toBe(0)

    const first = await t.api.patch(`/agents/${agent}`, { analysis: { fields: ok } })
    expect(first.status, first.text).toBe(200)
    expect(first.body).toMatchObject({
      changed: ['analysis'],
      analysis_version: 1,
      agent_version: before.agent_version,
    })
    // The same value again changes nothing; null is a change; each change bumps once.
    const same = await t.api.patch(`/agents/${agent}`, { analysis: { fields: ok } })
    expect(same.body).toMatchObject({ changed: [], analysis_version: 1 })
    expect((await t.api.patch(`/agents/${agent}`, { analysis: null })).body.analysis_version).toBe(2)
    const setting = { fields: FIELDS, success_criteria: 'The visitor leaves an e-mail address.' }
    const set = await t.api.patch(`/agents/${agent}`, { analysis: setting })
    expect(set.body.analysis_version).toBe(3)
    const got = (await t.api.get(`/agents/${agent}`)).body
    expect(got).toMatchObject({ analysis: setting, analysis_version: 3 })
    version = 3
  })

  it('analyses an ended API chat once, every value sliced from its turn, nothing invented', async () => {
    verifies(
      'quality.analysis.chat',
      'quality.analysis.evidence',
      'quality.analysis.no-invented',
      'quality.analysis.event',
    )
    // The greeting asks the question the boolean field answers.
    const c = await t.api.post('/conversations', { agent_id: agent, send_greeting: true })
    expect(c.status, c.text).toBe(201)
    chatId = c.body.conversation_id
    for (const text of SAID) expect((await t.api.post(`/conversations/${chatId}/messages`, { text })).status).toBe(200)
    expect((await t.api.post(`/conversations/${chatId}/end`)).status).toBe(200)
    const conv = await analysed(t.api, chatId, version)
    expect(conv.analysis).toMatchObject({ analysis_version: version, values: EXPECTED, success: true })
    expect(conv.analysis.analyzed_at).toMatch(/Z$/)
    expect(conv.transcript[0]).toMatchObject({ speaker: 'agent', text: GREETING })
    // The field the conversation never states is null with no evidence.
    expect(conv.analysis.evidence.budget).toEqual([])
    expectEvidence(conv)
    // The evidence is in the visitor's turns.
    const visitorTurns = new Set(
      conv.transcript.filter((x: any) => x.speaker === 'visitor').map((x: any) => x.turn_index),
    )
    for (const list of Object.values(conv.analysis.evidence) as any[][])
      for (const e of list) expect(visitorTurns.has(e.turn_index)).toBe(true)

    const got = await rx.waitFor(
      (r) => r.some((x) => x.json?.data?.conversation_id === chatId),
      'conversation.analyzed',
    )
    const mine = got.filter((x) => x.json?.data?.conversation_id === chatId)
    expect(mine).toHaveLength(1)
    expect(mine[0].headers['x-svc-event']).toBe('conversation.analyzed')
    expect(mine[0].json).toMatchObject({
      type: 'conversation.analyzed',
      account_id: t.accountId,
      data: { conversation_id: chatId, account_id: t.accountId, agent_id: agent, analysis: conv.analysis },
    })
    // Ending again does not analyse again.
    expect((await t.api.post(`/conversations/${chatId}/end`)).status).toBe(200)
  })

  it('analyses a simulated phone call from its transcribed turns', async () => {
    verifies('quality.analysis.phone', 'quality.analysis.evidence')
    const r = await t.api.post('/simulator/inbound-calls', { to: TO, from: '+14155550142', utterances: SAID })
    expect(r.status, r.text).toBe(202)
    callId = r.body.conversation_id
    const conv = await analysed(t.api, callId, version)
    expect(conv.channel_detail).toEqual({ channel: 'phone_inbound' })
    expect(conv.transcript.filter((x: any) => x.speaker === 'visitor').map((x: any) => x.text)).toEqual(SAID)
    expect(conv.analysis).toMatchObject({ analysis_version: version, values: EXPECTED, success: true })
    expectEvidence(conv)
    await rx.waitFor((x) => x.some((y) => y.json?.data?.conversation_id === callId), 'the call analysed event')
    expect(analyzedEvents(callId)).toHaveLength(1)
  })

  it('never analyses the calls of an agent test run', async () => {
    verifies('quality.analysis.test-runs')
    await rx.waitFor(
      (r) => r.filter((x) => x.json?.type === 'conversation.analyzed').length >= 2,
      'the chat and call analyses',
    )
    const before = rx.received.filter((x) => x.json?.type === 'conversation.analyzed').length
    const test = await t.api.post(`/agents/${agent}/tests`, {
      name: 'Caller',
      surface: 'phone',
      turns: [{ user: SAID[1] }],
    })
    expect(test.status, test.text).toBe(201)
    const run = await t.api.post(`/agents/${agent}/test-runs`, { test_ids: [test.body.test_id] })
    expect(run.status, run.text).toBe(202)
    await until(
      'the run to finish',
      async () => {
        const g = await t.api.get(`/test-runs/${run.body.run_id}`)
        return ['passed', 'failed', 'error'].includes(g.body.status) ? g.body : null
      },
      90_000,
      250,
    )
    // A job queued by mistake would have run by now (the queue polls every 0.5 s).
    await new Promise((r) => setTimeout(r, 3_000))
    expect(rx.received.filter((x) => x.json?.type === 'conversation.analyzed')).toHaveLength(before)
  })

  it('shows the analysis with include=analysis only, on the list and the detail, with values redacted', async () => {
    verifies('quality.analysis.include', 'quality.analysis.redaction')
    const detail = await t.api.get(`/conversations/${chatId}`)
    expect(detail.body).not.toHaveProperty('analysis')
    const list = await t.api.get(`/conversations?agent_id=${agent}`)
    expect(list.body.data[0]).not.toHaveProperty('analysis')
    const withIt = await t.api.get(`/conversations?agent_id=${agent}&include=analysis`)
    expect(withIt.status, withIt.text).toBe(200)
    const byId = Object.fromEntries((withIt.body.data as any[]).map((c) => [c.conversation_id, c]))
    expect(byId[chatId].analysis).toMatchObject({ analysis_version: version, values: EXPECTED })
    expect(byId[callId].analysis).toMatchObject({ analysis_version: version, values: EXPECTED })
    // A conversation not yet ended has none.
    const open = await t.api.post('/conversations', { agent_id: agent })
    expect((await t.api.get(`/conversations/${open.body.conversation_id}?include=analysis`)).body.analysis).toBeNull()

    // Redacted on request: values masked as the transcript is, the evidence slicing the masked text.
    const masked = await t.api.get(`/conversations/${chatId}?include=transcript,analysis&redact=true`)
    expect(masked.body.analysis.values).toMatchObject({
      email: '******************om',
      phone: '*************00',
      guests: 12,
      product: 'wedding cake',
    })
    expect(masked.body.redaction_rules_applied).toEqual(expect.arrayContaining(['email', 'phone']))
    expectEvidence(masked.body, {
      ...WORDS,
      email: masked.body.analysis.values.email,
      phone: masked.body.analysis.values.phone,
    })
    // By the account's default too, on the list (PostgreSQL's JSON, parsed again to mask) and the detail.
    expect((await t.api.patch(`/accounts/${t.accountId}`, { default_redaction: true })).status).toBe(200)
    try {
      const l = await t.api.get(`/conversations?agent_id=${agent}&include=analysis`)
      const item = (l.body.data as any[]).find((c) => c.conversation_id === chatId)
      expect(item.analysis.values.email).toBe('******************om')
      expect((await t.api.get(`/conversations/${chatId}?include=analysis`)).body.analysis.values.email).toBe(
        '******************om',
      )
    } finally {
      await t.api.patch(`/accounts/${t.accountId}`, { default_redaction: false })
    }
  })

  it('analyses again only at a new version, by a backfill that a second run adds nothing to', async () => {
    verifies('quality.analysis.versioned', 'quality.analysis.backfill')
    const bumped = await t.api.patch(`/agents/${agent}`, {
      analysis: { fields: [...FIELDS, { name: 'allergy', type: 'string', description: 'Any allergy mentioned.' }] },
    })
    expect(bumped.body.analysis_version).toBe(version + 1)
    // Until analysed at the new version, a conversation shows its analysis of the old one.
    expect((await t.api.get(`/conversations/${chatId}?include=analysis`)).body.analysis.analysis_version).toBe(version)
    const events = rx.received.filter((x) => x.json?.type === 'conversation.analyzed').length
    const run = await t.api.post(`/agents/${agent}/analysis/backfill`, {})
    expect(run.status, run.text).toBe(202)
    // The chat, the call and the open conversation ended by nobody: two are pending.
    expect(run.body).toMatchObject({ agent_id: agent, analysis_version: version + 1, pending: 2, status: 'queued' })
    for (const id of [chatId, callId]) {
      const conv = await analysed(t.api, id, version + 1)
      expect(conv.analysis.values).toEqual({ ...EXPECTED, allergy: null })
      expectEvidence(conv)
    }
    await rx.waitFor(
      (r) => r.filter((x) => x.json?.type === 'conversation.analyzed').length >= events + 2,
      'two more analyzed events',
    )
    const again = await t.api.post(`/agents/${agent}/analysis/backfill`, {})
    expect(again.body).toMatchObject({ pending: 0 })
    await new Promise((r) => setTimeout(r, 2_000))
    // One event per conversation per version: nothing new after the second run.
    expect(rx.received.filter((x) => x.json?.type === 'conversation.analyzed').length).toBe(events + 2)
    expect(analyzedEvents(chatId).map((x) => x.json.data.analysis.analysis_version)).toEqual([version, version + 1])
    // The window is checked like every other.
    const wrong = await t.api.post(`/agents/${agent}/analysis/backfill`, {
      from: '2026-01-02T00:00:00Z',
      to: '2026-01-01T00:00:00Z',
    })
    expectError(wrong, 400, 'invalid_date_range')
  })

  it('keeps analyses to their account and their scopes', async () => {
    verifies('quality.analysis.isolation', 'quality.analysis.backfill')
    expectError(await other.api.post(`/agents/${agent}/analysis/backfill`, {}), 404, 'agent_not_found')
    expect((await other.api.get(`/conversations/${chatId}?include=analysis`)).status).toBe(404)
    const theirs = await other.api.get('/conversations?include=analysis')
    expect((theirs.body.data as any[]).map((c) => c.conversation_id)).not.toContain(chatId)
    const k1 = await master.post(`/users/${t.userId}/credentials`, {
      name: 'reader',
      scopes: ['agents:read', 'conversations:read'],
    })
    const k2 = await master.post(`/users/${t.userId}/credentials`, { name: 'summaries', scopes: ['summaries:read'] })
    expectError(
      await createApi(base, k1.body.secret).post(`/agents/${agent}/analysis/backfill`, {}),
      403,
      'insufficient_scope',
    )
    const reader = await createApi(base, k1.body.secret).get(`/conversations/${chatId}?include=analysis`)
    expect(reader.body.analysis.analysis_version).toBe(version + 1)
    expectError(await createApi(base, k2.body.secret).get('/conversations?include=analysis'), 403, 'insufficient_scope')
    // An agent with no analysis setting has nothing to backfill.
    expect((await t.api.patch(`/agents/${agent}`, { analysis: null })).status).toBe(200)
    expectError(await t.api.post(`/agents/${agent}/analysis/backfill`, {}), 409, 'invalid_state')
  })
})
