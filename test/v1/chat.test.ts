// Chat via API on the shared server: an agent built from a site the test serves, plus a keep-as-is
// document and the capture_lead capability. Create with a greeting, three answered turns quoting the
// summary and the keep-as-is text, a lead whose e-mail lands in GET /mail/outbox, end, the summary
// (outcome lead_captured, polled through POST …/end, which answers the conversation as GET shows it),
// the same read back through GET /conversations/{conv}, …/summary and the list, and usage in
// GET /accounts/{acc}/usage.
// Also: message idempotency, one turn at a time, 402, identity validation, tenancy.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, err, type Api } from '../helpers/api'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'
import { buildAgent } from '../helpers/build'
import { until } from '../helpers/wait'

const KEEP =
  'IMPORTANT INSTRUCTION FOR AI ASSISTANT: The loyalty discount code is WOMBAT42 and gives ten percent off any service.'

describe('chat via API (shared server)', () => {
  const base = inject('base')
  const master = createApi(base, inject('masterKey'))
  let t: Tenant
  let other: Tenant
  let site: TestSite
  let agentId: string

  beforeAll(async () => {
    site = await serveSite({
      '/': {
        body: html(
          'Quokka Cycles | Home',
          '<h1>Quokka Cycles</h1><p>Quokka Cycles repairs bicycles in Hobart.</p><a href="/prices">Prices</a> <a href="/team">Team</a>',
        ),
      },
      '/prices': {
        body: html(
          'Prices | Quokka Cycles',
          '<p>A puncture repair costs $12.</p><p>A full service costs $89 and takes two days.</p>',
        ),
      },
      '/team': {
        body: html(
          'Team | Quokka Cycles',
          '<p>Our mechanic Barnaby Wobbleton has fixed bikes since 1994.</p><p>The shop opens Tuesday to Sunday from 9am.</p>',
        ),
      },
    })
    t = await createTenant(master)
    other = await createTenant(master)
    // buildAgent throws unless the build answers 202 and then succeeds.
    agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    const doc = await t.api.post(`/agents/${agentId}/kb/documents`, { title: 'Discounts', text: KEEP })
    expect(doc.status).toBe(202)
    const indexed = await until(
      'document',
      async () => {
        const d = await t.api.get(`/agents/${agentId}/kb/documents/${doc.body.doc_id}`)
        return d.body.status !== 'processing' ? d.body : null
      },
      45_000,
    )
    expect(indexed).toMatchObject({ status: 'indexed', keep_verbatim: true })
    const p = await t.api.patch(`/agents/${agentId}`, {
      capabilities: ['capture_lead'],
      capability_settings: { lead_emails: ['sales@example.com'] },
    })
    expect(p.status).toBe(200)
  }, 90_000)
  afterAll(async () => {
    await site?.close()
  })

  const send = (conv: string, text: string, extra: Record<string, unknown> = {}, api: Api = t.api) =>
    api.post(`/conversations/${conv}/messages`, { text, ...extra })

  it('create, three answered turns from the summary and the keep-as-is text, a lead e-mailed to the outbox, end, summary and usage', async () => {
    verifies(
      'conversations.create',
      'conversations.greeting',
      'conversations.messages',
      'conversations.knowledge',
      'conversations.tools',
      'conversations.end',
      'conversations.billing',
      'mail.outbox',
    )
    const summary = (await t.api.get(`/agents/${agentId}/kb/summary`)).body.text as string
    expect(summary).toContain('$12')
    expect(summary).toContain('Barnaby Wobbleton')

    const c = await t.api.post('/conversations', {
      agent_id: agentId,
      send_greeting: true,
      external_session_id: 'crm-42',
      identity: { email: 'visitor@example.com', plan_tier: 'gold' },
      custom: { source: 'test' },
    })
    expect(c.status).toBe(201)
    const conv = c.body
    expect(conv).toMatchObject({
      conversation_id: expect.stringMatching(/^conv_p\d+$/),
      account_id: t.accountId,
      agent_type: 'chat',
      status: 'in_progress',
      session_id: expect.stringMatching(/^api_[0-9A-HJKMNP-TV-Z]{26}$/),
      external_session_id: 'crm-42',
      agent_version: expect.stringMatching(/^agt\d+-v\d+$/),
      prompt_version: expect.stringMatching(/chat/),
      model: 'local-retrieval-1',
      channel_detail: { channel: 'api' },
      identity: { email: 'visitor@example.com', plan_tier: 'gold' },
      has_identity: true,
      custom: { source: 'test' },
    })
    expect(new Date(conv.started_at).toISOString()).toBe(conv.started_at)
    expect(conv.transcript).toHaveLength(1)
    expect(conv.transcript[0]).toMatchObject({
      turn_index: 0,
      speaker: 'agent',
      turn_type: 'greeting',
      latency_ms: null,
      confidence: null,
      sources: null,
      unanswered: false,
    })
    expect(conv.transcript[0].text.length).toBeGreaterThan(3)
    const id = conv.conversation_id

    const t1 = await send(id, 'How much does a puncture repair cost?')
    expect(t1.status).toBe(200)
    expect(t1.body.turn).toMatchObject({
      speaker: 'agent',
      turn_type: 'answer',
      unanswered: false,
      detected_language: 'en',
      turn_index: 2,
    })
    expect(t1.body.turn.text).toContain('$12')
    expect(t1.body.turn.latency_ms).toEqual(expect.any(Number))
    expect(t1.body.usage.model).toBe('local-retrieval-1')
    expect(t1.body.usage.tokens.input).toBeGreaterThan(0)
    expect(t1.body.usage.tokens.total).toBe(t1.body.usage.tokens.input + t1.body.usage.tokens.output)
    expect(t1.body.turns[0]).toMatchObject({
      turn_index: 1,
      speaker: 'visitor',
      turn_type: 'message',
      text: 'How much does a puncture repair cost?',
    })

    const t2 = await send(id, 'Is there a loyalty discount code?')
    expect(t2.status).toBe(200)
    expect(t2.body.turn.text).toContain('WOMBAT42')
    expect(t2.body.turn.unanswered).toBe(false)

    const t3 = await send(id, 'Which mechanic fixed bikes since 1994?')
    expect(t3.status).toBe(200)
    expect(t3.body.turn.text).toContain('Barnaby Wobbleton')

    const lead = await send(id, "Please call me back, I'm Ada, ada@example.com")
    expect(lead.status).toBe(200)
    const tool = lead.body.turns.find((x: any) => x.turn_type === 'tool')
    expect(tool).toMatchObject({
      speaker: 'agent',
      tool: {
        name: 'capture_lead',
        arguments: { email: 'ada@example.com', name: 'Ada' },
        result: { ok: true, outcome: 'lead_captured' },
      },
    })
    expect(lead.body.turn.turn_type).toBe('answer')
    expect(lead.body.turn.text).toMatch(/get back to you/i)

    const mail = await t.api.get('/mail/outbox')
    expect(mail.status).toBe(200)
    const sent = mail.body.data.find((m: any) => m.tags.conversation_id === id)
    expect(sent).toMatchObject({
      provider: 'outbox',
      to: ['sales@example.com'],
      subject: 'New lead: Ada',
      status: 'sent',
    })
    expect(sent.text).toContain('ada@example.com')
    expect((await other.api.get('/mail/outbox')).body.data).toEqual([])

    const end = await t.api.post(`/conversations/${id}/end`, {})
    expect(end.status).toBe(200)
    expect(end.body).toMatchObject({ status: 'completed', ended_at: expect.any(String) })
    expect(end.body.transcript.length).toBe(1 + 2 * 3 + 3)
    const ready = await until(
      'summary',
      async () => {
        const r = await t.api.post(`/conversations/${id}/end`, {})
        expect(r.status).toBe(200)
        expect(r.body.ended_at).toBe(end.body.ended_at)
        return r.body.summary_status === 'ready' ? r.body : null
      },
      30_000,
    )
    expect(ready.summary).toMatchObject({
      outcome: 'lead_captured',
      escalated_to_human: { value: false, reason: null },
      lead: { name: 'Ada', email: 'ada@example.com' },
      language: 'en',
      sentiment: expect.any(String),
    })
    expect(ready.summary.text.length).toBeGreaterThan(10)
    expect(ready.summary.topics.length).toBeGreaterThan(0)
    expect(ready.summary.action_items.join(' ')).toContain('ada@example.com')
    expect(ready.transcript.map((x: any) => x.turn_type)).toEqual([
      'greeting',
      'message',
      'answer',
      'message',
      'answer',
      'message',
      'answer',
      'message',
      'tool',
      'answer',
    ])
    // The reads agree: the detail (transcript as text too), the summary route and the list.
    const got = await t.api.get(`/conversations/${id}?transcript_format=text`)
    expect(got.status).toBe(200)
    expect(got.body).toMatchObject({
      status: 'completed',
      outcome: 'lead_captured',
      escalated: false,
      turn_count: 10,
      summary_status: 'ready',
      custom: { source: 'test' },
      redacted: false,
    })
    expect(got.body.transcript).toEqual(ready.transcript)
    expect(got.body.transcript_text).toContain('visitor: How much does a puncture repair cost?')
    expect(got.body.transcript_text).toContain('WOMBAT42')
    const { meta: _gm, transcript_text: _tt, ...detail } = got.body
    const { meta: _rm, ...endAnswer } = ready
    expect(endAnswer).toEqual(detail)
    expect((await t.api.get(`/conversations/${id}/summary`)).body).toEqual(
      expect.objectContaining({ summary_status: 'ready', summary: ready.summary }),
    )
    expect(
      (await t.api.get('/conversations?external_session_id=crm-42&outcome=lead_captured')).body.data.map(
        (x: any) => x.conversation_id,
      ),
    ).toEqual([id])

    const ended = await send(id, 'Still there?')
    expect(ended.status).toBe(409)
    expect(err(ended).code).toBe('conversation_ended')

    const day = new Date().toISOString().slice(0, 10)
    const usage = await t.api.get(
      `/accounts/${t.accountId}/usage?from=${day}T00:00:00Z&to=${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}T00:00:00Z&group_by=channel`,
    )
    expect(usage.status).toBe(200)
    const api = usage.body.data.find((r: any) => r.channel === 'api')
    expect(api.conversations).toBeGreaterThanOrEqual(1)
    expect(api.tokens).toBeGreaterThan(0)
    expect(api.cost_usd).toBeGreaterThan(0)
  }, 60_000)

  it('a question the knowledge cannot answer is marked unanswered', async () => {
    verifies('conversations.knowledge')
    const c = await t.api.post('/conversations', { agent_id: agentId })
    expect(c.status).toBe(201)
    expect(c.body.transcript).toEqual([])
    const r = await send(c.body.conversation_id, 'What is the airspeed velocity of an unladen swallow?')
    expect(r.status).toBe(200)
    expect(r.body.turn).toMatchObject({ turn_type: 'answer', unanswered: true })
  })

  it('idempotency_key: the same text replays the stored answer with Idempotent-Replayed; another text is 409', async () => {
    verifies('conversations.idempotency')
    const c = await t.api.post('/conversations', { agent_id: agentId })
    const id = c.body.conversation_id
    const a = await send(id, 'How much does a full service cost?', { idempotency_key: 'k-1' })
    expect(a.status).toBe(200)
    expect(a.headers.get('idempotent-replayed')).toBeNull()
    const b = await send(id, 'How much does a full service cost?', { idempotency_key: 'k-1' })
    expect(b.status).toBe(200)
    expect(b.headers.get('idempotent-replayed')).toBe('true')
    expect(b.body.turn).toEqual(a.body.turn)
    expect(b.body.usage).toEqual(a.body.usage)
    const d = await send(id, 'Something else entirely', { idempotency_key: 'k-1' })
    expect(d.status).toBe(409)
    expect(err(d)).toMatchObject({ code: 'idempotency_key_reused', field: 'idempotency_key' })
    const end = await t.api.post(`/conversations/${id}/end`, {})
    expect(end.body.transcript).toHaveLength(2)
    // A replay still answers after the end: it is the stored response, not a new turn.
    const after = await send(id, 'How much does a full service cost?', { idempotency_key: 'k-1' })
    expect(after.status).toBe(200)
    expect(after.headers.get('idempotent-replayed')).toBe('true')
  })

  it('concurrent messages: refusals are 409 turn_in_progress and the turns that ran never interleave', async () => {
    verifies('conversations.messages')
    const c = await t.api.post('/conversations', { agent_id: agentId })
    const id = c.body.conversation_id
    // Five at once: the first claim wins; the others that arrive while its turn runs are refused. A turn of the local engine
    // takes milliseconds, so a late request may find the claim released and run its own turn afterwards:
    // what must hold is that every refusal is turn_in_progress, and the turns that ran
    // did not interleave (each visitor message is followed by its own answer). The deterministic 409 is
    // in chat-claim.test.ts (a claim held by "another instance" written into the database).
    const all = await Promise.all([1, 2, 3, 4, 5].map((i) => send(id, `How much does a puncture repair cost? (${i})`)))
    const ok = all.filter((r) => r.status === 200)
    console.log(`[chat] concurrent messages: ${ok.length} answered, ${all.length - ok.length} refused`)
    const refused = all.filter((r) => r.status !== 200)
    expect(ok.length).toBeGreaterThanOrEqual(1)
    for (const r of refused) expect(r.status).toBe(409)
    for (const r of refused) expect(err(r).code).toBe('turn_in_progress')
    const indexes = ok.map((r) => r.body.turns.map((x: any) => x.turn_index)).sort((x, y) => x[0] - y[0])
    expect(indexes.flat()).toEqual(Array.from({ length: ok.length * 2 }, (_, i) => i))
    // The claim is released after the turn: the next message goes through.
    const next = await send(id, 'When does the shop open?')
    expect(next.status).toBe(200)
    expect(next.body.turn.turn_index).toBe(ok.length * 2 + 1)
  })

  it('identity: invalid_type naming the key, invalid_email, invalid_phone; identify merges', async () => {
    verifies('conversations.identity')
    const bad = async (identity: unknown) => err(await t.api.post('/conversations', { agent_id: agentId, identity }))
    expect(await bad({ email: 'nope' })).toMatchObject({ code: 'invalid_email', field: 'identity.email' })
    expect(await bad({ phone_e164: '555-1234' })).toMatchObject({ code: 'invalid_phone', field: 'identity.phone_e164' })
    expect(await bad({ crm_id: 42 })).toMatchObject({ code: 'invalid_type', field: 'identity.crm_id' })
    expect(await bad({ email: ['a@example.com'] })).toMatchObject({ code: 'invalid_type', field: 'identity.email' })
    const c = await t.api.post('/conversations', { agent_id: agentId, identity: { crm_id: 'c-1' } })
    expect(c.body).toMatchObject({ has_identity: false, identity: { crm_id: 'c-1' } })
    const id = c.body.conversation_id
    const i = await t.api.post(`/conversations/${id}/identify`, {
      identity: { phone_e164: '+14155550123', crm_id: null },
    })
    expect(i.status).toBe(200)
    expect(i.body).toMatchObject({ has_identity: true, identity: { phone_e164: '+14155550123' } })
    expect(i.body.identity.crm_id).toBeUndefined()
    expect(err(await t.api.post(`/conversations/${id}/identify`, { identity: { email: 'x@' } })).code).toBe(
      'invalid_email',
    )
  })

  it('identity always carries email, phone_e164, partner_agent_id and email_source, null when unknown, in every answer and read', async () => {
    verifies('conversations.identity-keys')
    const FOUR = { email: null, phone_e164: null, partner_agent_id: null, email_source: null }
    const cases: [string, Record<string, unknown> | undefined, Record<string, unknown>][] = [
      ['none', undefined, FOUR],
      ['email', { email: 'only@example.com' }, { ...FOUR, email: 'only@example.com' }],
      ['phone', { phone_e164: '+14155550199', crm_id: 'c-9' }, { ...FOUR, phone_e164: '+14155550199', crm_id: 'c-9' }],
    ]
    const tag = `ik-${Date.now()}`
    for (const [name, identity, want] of cases) {
      const ext = `${tag}-${name}`
      const c = await t.api.post('/conversations', {
        agent_id: agentId,
        external_session_id: ext,
        ...(identity ? { identity } : {}),
      })
      expect(c.status, name).toBe(201)
      expect(c.body.identity, name).toEqual(want)
      const id = c.body.conversation_id
      expect((await t.api.get(`/conversations/${id}`)).body.identity, name).toEqual(want)
      expect((await t.api.get(`/conversations/${id}?include=identity`)).body.identity, name).toEqual(want)
      const listed = await t.api.get(`/conversations?external_session_id=${ext}`)
      expect(
        listed.body.data.map((x: any) => x.identity),
        name,
      ).toEqual([want])
      // identify removing the only documented key leaves it null, not absent.
      const cleared = await t.api.post(`/conversations/${id}/identify`, { identity: { email: null, phone_e164: null } })
      expect(cleared.status, name).toBe(200)
      expect(cleared.body.identity, name).toEqual({ ...want, email: null, phone_e164: null })
      const ended = await t.api.post(`/conversations/${id}/end`, {})
      expect(ended.body.identity, name).toEqual({ ...want, email: null, phone_e164: null })
    }
    // Redaction masks values and leaves the null keys null.
    const [email] = (await t.api.get(`/conversations?external_session_id=${tag}-email`)).body.data
    await t.api.post(`/conversations/${email.conversation_id}/identify`, { identity: { email: 'only@example.com' } })
    expect((await t.api.get(`/conversations/${email.conversation_id}?redact=true`)).body.identity).toEqual({
      ...FOUR,
      email: '**************om',
    })
  })

  it("messages, end and identify on a deleted conversation answer 410 conversation_deleted; another tenant's deleted one is 404", async () => {
    verifies('conversations.deleted-writes')
    const c = await t.api.post('/conversations', { agent_id: agentId })
    const id = c.body.conversation_id
    expect((await t.api.delete(`/conversations/${id}`)).status).toBe(204)
    const writes = [
      ['messages', (api: Api) => send(id, 'Hello?', {}, api)],
      ['messages with idempotency_key', (api: Api) => send(id, 'Hello?', { idempotency_key: 'gone-1' }, api)],
      ['end', (api: Api) => api.post(`/conversations/${id}/end`, {})],
      ['identify', (api: Api) => api.post(`/conversations/${id}/identify`, { identity: { name: 'Ada' } })],
    ] as const
    for (const [name, call] of writes) {
      const mine = await call(t.api)
      expect(mine.status, name).toBe(410)
      expect(err(mine).code, name).toBe('conversation_deleted')
      const foreign = await call(other.api)
      expect(foreign.status, name).toBe(404)
      expect(err(foreign).code, name).toBe('not_found')
    }
  })

  it("unknown agent, malformed ids, unknown fields and another tenant's conversation", async () => {
    verifies('conversations.create')
    expect(err(await t.api.post('/conversations', { agent_id: 'agt_999999' }))).toMatchObject({
      code: 'agent_not_found',
    })
    expect(err(await t.api.post('/conversations', { agent_id: 'conv_1' }))).toMatchObject({ code: 'invalid_id' })
    expect(err(await t.api.post('/conversations', {}))).toMatchObject({ code: 'validation_error' })
    expect(err(await t.api.post('/conversations', { agent_id: agentId, colour: 'red' }))).toMatchObject({
      code: 'unsupported_field',
      field: 'colour',
    })
    expect((await other.api.post('/conversations', { agent_id: agentId })).status).toBe(404)
    const c = await t.api.post('/conversations', { agent_id: agentId })
    const id = c.body.conversation_id
    expect((await send(id, 'Hello there', {}, other.api)).status).toBe(404)
    expect((await other.api.post(`/conversations/${id}/end`, {})).status).toBe(404)
    expect((await other.api.post(`/conversations/${id}/identify`, { identity: { name: 'x' } })).status).toBe(404)
    expect(err(await send('conv_x1', 'Hello'))).toMatchObject({ code: 'invalid_id' })
    expect(err(await send(id, ''))).toMatchObject({ code: 'validation_error' })
  })

  it('a suspended account is refused before billing: 403 account_suspended (decisions Suspension)', async () => {
    verifies('conversations.billing')
    const s = await createTenant(master)
    expect((await master.patch(`/users/${s.userId}`, { status: 'suspended' })).status).toBe(200)
    const r = await s.api.post('/conversations', { agent_id: agentId })
    expect(r.status).toBe(403)
    expect(err(r).code).toBe('account_suspended')
  })
})
