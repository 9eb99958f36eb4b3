// Reading conversations on the shared server, with data created through POST /conversations/import on an
// agent built from a site the test serves: every list filter and error, the default window, backfill,
// summaries-only keys, sorts, cursor binding, detail (include, text, redaction), soft delete and tombstones.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, err, type Api } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const base = inject('base')
const master = createApi(base, inject('masterKey'))
let t: Tenant
let other: Tenant
let site: TestSite
let agentId: string
let readOnly: Api // conversations:read without backfill
let summariesOnly: Api
const ids: Record<string, string> = {}
const DAY = 86_400_000
const NO_IDENTITY = { email: null, phone_e164: null, partner_agent_id: null, email_source: null }
const ago = (days: number, extraMs = 0) => new Date(Date.now() - days * DAY + extraMs).toISOString()
const PHONE = '+14155550101'
const PII =
  'Reach me at jane.doe@example.com or +1 415 555 0100, card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00.'

const importCall = (api: Api, body: Record<string, unknown>) =>
  api.post('/conversations/import', {
    agent_id: agentId,
    summary: { text: 'A call.', outcome: 'resolved' },
    ...body,
  })

const list = (api: Api, qs = '') => api.get(`/conversations${qs ? '?' + qs : ''}`)
const idsOf = (r: { body: any }) => (r.body.data as any[]).map((c) => c.conversation_id)

beforeAll(async () => {
  site = await serveSite({
    '/': { body: html('Quill Plumbing', '<h1>Quill Plumbing</h1><p>Emergency plumbing in Denver, 24/7.</p>') },
  })
  t = await createTenant(master)
  other = await createTenant(master)
  agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en', agent_type: 'phone' })
  const k1 = await master.post(`/users/${t.userId}/credentials`, { name: 'read', scopes: ['conversations:read'] })
  const k2 = await master.post(`/users/${t.userId}/credentials`, { name: 'summaries', scopes: ['summaries:read'] })
  readOnly = createApi(base, k1.body.secret)
  summariesOnly = createApi(base, k2.body.secret)
  const specs: Record<string, Record<string, unknown>> = {
    A: {
      started_at: ago(1),
      duration_s: 120,
      direction: 'inbound',
      external_session_id: 'ext-A',
      language: 'en-US',
      identity: { phone_e164: PHONE, email: 'jane.doe@example.com' },
      summary: { text: `Caller asked about a leak. ${PII}`, outcome: 'resolved', topics: ['leak'] },
      transcript: [
        { speaker: 'agent', text: 'Quill Plumbing, how can I help?', timestamp: ago(1) },
        { speaker: 'visitor', text: PII, timestamp: ago(1, 5000) },
      ],
    },
    B: {
      started_at: ago(2),
      direction: 'outbound',
      language: 'fr',
      summary: {
        text: 'Wants a quote.',
        outcome: 'lead_captured',
        escalated_to_human: { value: true, reason: 'asked for a human' },
      },
    },
    C: {
      started_at: ago(10),
      language: 'en',
      identity: { phone_e164: PHONE },
      summary: { text: 'Still leaking.', outcome: 'unresolved' },
    },
    D: { started_at: ago(40), identity: { phone_e164: PHONE }, summary: { text: 'Old call.', outcome: 'resolved' } },
    E: { started_at: ago(3), summary: { text: 'To be deleted.', outcome: 'abandoned' } },
  }
  for (const [name, body] of Object.entries(specs)) {
    const r = await importCall(t.api, body)
    expect(r.status, r.text).toBe(201)
    ids[name] = r.body.conversation_id
  }
}, 120_000)
afterAll(async () => {
  await site?.close()
})

describe('POST /conversations/import', () => {
  it('creates a completed conv_u conversation on channel import stamped from the agent, with the summary ready', async () => {
    verifies('conversations.import', 'contract.smaller-points')
    const agent = (await t.api.get(`/agents/${agentId}`)).body
    const r = await t.api.get(`/conversations/${ids.A}`)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      conversation_id: expect.stringMatching(/^conv_u\d+$/),
      account_id: t.accountId,
      agent_id: agentId,
      agent_type: 'phone',
      status: 'completed',
      channel_detail: { channel: 'import' },
      external_session_id: 'ext-A',
      agent_version: agent.agent_version,
      model: agent.model,
      summary_status: 'ready',
      outcome: 'resolved',
      duration_s: 120,
      language: 'en-US',
      has_identity: true,
      turn_count: 2,
      summary: {
        outcome: 'resolved',
        topics: ['leak'],
        escalated_to_human: { value: false, reason: null },
        sentiment: null,
        action_items: [],
      },
    })
    expect(r.body.prompt_version).toMatch(/phone/)
    expect(r.body.session_id).toMatch(/^imp_[0-9A-HJKMNP-TV-Z]{26}$/)
    // Which way the call went stays with it (the phone history block reads it); inbound by default.
    expect(r.body.metrics).toMatchObject({ imported: true, direction: 'inbound' })
    const b = await t.api.get(`/conversations/${ids.B}?include=metrics`)
    expect(b.body).toMatchObject({ channel_detail: { channel: 'import' }, metrics: { direction: 'outbound' } })
    expect((await t.api.get(`/conversations/${ids.C}?include=metrics`)).body.metrics.direction).toBe('inbound')
  })

  it("refuses a bad phone, another account's agent, a missing summary and unknown fields", async () => {
    verifies('conversations.import')
    expect(err(await importCall(t.api, { started_at: ago(1), identity: { phone_e164: '0415 555' } })).code).toBe(
      'invalid_phone',
    )
    const foreign = await other.api.post('/conversations/import', {
      agent_id: agentId,
      started_at: ago(1),
      summary: { text: 'x', outcome: 'resolved' },
    })
    expect(foreign.status).toBe(404)
    expect(err(foreign).code).toBe('agent_not_found')
    const noSummary = await t.api.post('/conversations/import', { agent_id: agentId, started_at: ago(1) })
    expect(err(noSummary)).toMatchObject({ code: 'validation_error', field: 'summary' })
    expect(err(await importCall(t.api, { started_at: ago(1), summary: { text: 'x', outcome: 'great' } })).code).toBe(
      'validation_error',
    )
    expect(err(await importCall(t.api, { started_at: 'yesterday' })).code).toBe('invalid_date')
    expect(err(await importCall(t.api, { started_at: ago(1), bogus: 1 })).code).toBe('unsupported_field')
    // The channel is always import; the direction says which way the call went.
    expect(err(await importCall(t.api, { started_at: ago(1), channel: 'phone_inbound' }))).toMatchObject({
      code: 'unsupported_field',
      field: 'channel',
    })
    expect(err(await importCall(t.api, { started_at: ago(1), direction: 'sideways' }))).toMatchObject({
      code: 'validation_error',
      field: 'direction',
    })
    expect(
      (
        await readOnly.post('/conversations/import', {
          agent_id: agentId,
          started_at: ago(1),
          summary: { text: 'x', outcome: 'resolved' },
        })
      ).status,
    ).toBe(403)
  })
})

describe('GET /conversations', () => {
  it('defaults to the last 30 days, newest first, with summary and identity, echoing the window in meta', async () => {
    verifies('conversations.list')
    const r = await list(t.api)
    expect(r.status).toBe(200)
    expect(idsOf(r)).toEqual([ids.A, ids.B, ids.E, ids.C])
    expect(r.body.meta.applied_default_range).toBe(true)
    const from = Date.parse(r.body.meta.from),
      to = Date.parse(r.body.meta.to)
    expect(to - from).toBe(30 * DAY)
    expect(Math.abs(to - Date.now())).toBeLessThan(60_000)
    expect(r.body.pagination).toEqual({ limit: 50, has_more: false, next_cursor: null })
    const a = r.body.data[0]
    expect(a.summary.text).toContain('leak')
    expect(a.identity).toEqual({ ...NO_IDENTITY, phone_e164: PHONE, email: 'jane.doe@example.com' })
    // Every documented identity key is present, null when unknown (B was imported without identity).
    expect(r.body.data[1].identity).toEqual(NO_IDENTITY)
    expect(a).not.toHaveProperty('metrics')
    expect(a).not.toHaveProperty('transcript')
    expect(r.headers.get('x-request-id')).toBeTruthy()
    expect(r.headers.get('x-ratelimit-limit')).toBeTruthy()
    expect(r.headers.get('x-ratelimit-remaining')).toBeTruthy()
  })

  it('builds the same object in PostgreSQL as the detail read maps in JavaScript', async () => {
    verifies('conversations.list')
    const row = (await list(t.api, 'include=summary,identity,metrics&external_session_id=ext-A')).body.data[0]
    const detail = (await t.api.get(`/conversations/${ids.A}?include=summary,identity,metrics`)).body
    const { meta: _m, redacted: _r, redaction_rules_applied: _a, custom: _c, ...rest } = detail
    expect(row).toEqual(rest)
  })

  it('filters by every parameter', async () => {
    verifies('conversations.list')
    const cases: [string, string[]][] = [
      ['channel=import', [ids.A, ids.B, ids.E, ids.C]],
      ['channel=phone_inbound&channel=phone_outbound', []],
      ['outcome=resolved&outcome=unresolved', [ids.A, ids.C]],
      ['language=en', [ids.A, ids.C]],
      ['language=EN-us', [ids.A]],
      ['language=fr&language=de', [ids.B]],
      ['escalated=true', [ids.B]],
      ['escalated=false', [ids.A, ids.E, ids.C]],
      ['has_identity=true', [ids.A, ids.C]],
      ['has_identity=false', [ids.B, ids.E]],
      ['has_recording=true', []],
      ['has_recording=false', [ids.A, ids.B, ids.E, ids.C]],
      ['external_session_id=ext-A', [ids.A]],
      [`agent_id=${agentId}`, [ids.A, ids.B, ids.E, ids.C]],
      ['agent_id=agt_999999999', []],
      ['agent_type=phone', [ids.A, ids.B, ids.E, ids.C]],
      ['agent_type=chat', []],
      ['status=completed', [ids.A, ids.B, ids.E, ids.C]],
      ['status=in_progress', []],
      [`from=${ago(5)}`, [ids.A, ids.B, ids.E]],
      [`from=${ago(5)}&to=${ago(1.5)}`, [ids.B, ids.E]],
      [`to=${ago(5)}`, [ids.C, ids.D]],
      [`account_id=${t.userId}`, [ids.A, ids.B, ids.E, ids.C]],
    ]
    for (const [qs, want] of cases) {
      const r = await list(t.api, qs.replace(/\+/g, '%2B'))
      expect(r.status, `${qs}: ${r.text}`).toBe(200)
      expect(idsOf(r), qs).toEqual(want)
    }
    const explicit = await list(t.api, `from=${encodeURIComponent(ago(5))}`)
    expect(explicit.body.meta).toMatchObject({ applied_default_range: false, to: null })
  })

  it('updated_since alone opens the started_at window fully', async () => {
    verifies('conversations.list')
    const r = await list(t.api, `updated_since=${encodeURIComponent(ago(0.5))}`)
    expect(r.status).toBe(200)
    expect(idsOf(r)).toEqual([ids.A, ids.B, ids.E, ids.C, ids.D])
    expect(r.body.meta).toMatchObject({ applied_default_range: false, from: null, to: null })
    expect(
      idsOf(await list(t.api, `updated_since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)),
    ).toEqual([])
  })

  it('sorts by started_at and updated_at both ways', async () => {
    verifies('conversations.list')
    expect(idsOf(await list(t.api, 'sort=started_at'))).toEqual([ids.C, ids.E, ids.B, ids.A])
    // Imported in the order A, B, C, D, E: updated_at follows the import order.
    expect(idsOf(await list(t.api, 'sort=-updated_at'))).toEqual([ids.E, ids.C, ids.B, ids.A])
    expect(idsOf(await list(t.api, 'sort=updated_at'))).toEqual([ids.A, ids.B, ids.C, ids.E])
    expect(err(await list(t.api, 'sort=-created_at')).code).toBe('unsupported_filter')
  })

  it('answers the contract errors', async () => {
    verifies('conversations.list')
    const cases: [string, string, string | null][] = [
      ['channel=fax', 'unsupported_filter', 'channel'],
      ['status=done', 'unsupported_filter', 'status'],
      ['outcome=great', 'unsupported_filter', 'outcome'],
      ['agent_type=robot', 'unsupported_filter', 'agent_type'],
      ['include=transcript', 'unsupported_filter', 'include'],
      ['include=summary,bogus', 'unsupported_filter', 'include'],
      ['colour=red', 'unsupported_filter', 'colour'],
      ['escalated=yes', 'validation_error', 'escalated'],
      ['has_identity=1', 'validation_error', 'has_identity'],
      ['has_recording=maybe', 'validation_error', 'has_recording'],
      ['from=2026-01-01', 'invalid_date', 'from'],
      ['to=yesterday', 'invalid_date', 'to'],
      ['updated_since=2026-13-01T00:00:00Z', 'invalid_date', 'updated_since'],
      [`from=${ago(2)}&to=${ago(3)}`, 'invalid_date_range', 'from'],
      [`from=${ago(2)}&to=${ago(2)}`, 'invalid_date_range', 'from'],
      ['limit=0', 'invalid_limit', 'limit'],
      ['limit=501', 'invalid_limit', 'limit'],
      ['limit=ten', 'invalid_limit', 'limit'],
      ['agent_id=bot_1', 'invalid_id', 'agent_id.0'],
      ['cursor=not-a-cursor', 'invalid_cursor', 'cursor'],
    ]
    for (const [qs, code, field] of cases) {
      const r = await list(t.api, qs)
      expect(r.status, qs).toBe(400)
      expect(err(r).code, qs).toBe(code)
      if (field) expect(err(r).field, qs).toBe(field)
    }
    const foreign = await list(t.api, `account_id=${other.accountId}`)
    expect(foreign.status).toBe(403)
    expect(err(foreign).code).toBe('forbidden_account')
    const masterNoAccount = await list(master)
    expect(err(masterNoAccount).code).toBe('forbidden_account')
    const masterFor = await master.get('/conversations', { headers: { 'x-svc-account': t.accountId } })
    expect(idsOf(masterFor)).toEqual([ids.A, ids.B, ids.E, ids.C])
  })

  it('needs conversations:backfill for a from older than 30 days or a limit above 200, metered in the backfill class', async () => {
    verifies('conversations.list')
    const deep = `from=${encodeURIComponent(ago(45))}`
    for (const qs of ['limit=300', deep]) {
      const r = await list(readOnly, qs)
      expect(r.status, qs).toBe(403)
      expect(err(r).code).toBe('insufficient_scope')
    }
    expect((await list(readOnly, 'limit=200')).status).toBe(200)
    const ok = await list(t.api, deep)
    expect(ok.status).toBe(200)
    expect(idsOf(ok)).toEqual([ids.A, ids.B, ids.E, ids.C, ids.D])
    expect(ok.headers.get('ratelimit-policy')).toMatch(/^"backfill";q=10;/)
    const big = await list(t.api, 'limit=300')
    expect(big.status).toBe(200)
    expect(big.body.pagination.limit).toBe(300)
    expect(big.headers.get('ratelimit-policy')).toMatch(/^"backfill"/)
    expect((await list(t.api, 'limit=10')).headers.get('ratelimit-policy')).toMatch(/^"read"/)
  })

  it('treats a to without from as deep history: conversations:backfill, metered in the backfill class', async () => {
    verifies('conversations.list-to-backfill')
    // An open lower bound reaches the oldest history, however recent the to.
    for (const qs of [
      `to=${encodeURIComponent(ago(40))}`,
      `to=${encodeURIComponent(ago(5))}`,
      `to=${encodeURIComponent(ago(35))}&limit=10`,
    ]) {
      const r = await list(readOnly, qs)
      expect(r.status, qs).toBe(403)
      expect(err(r), qs).toMatchObject({ code: 'insufficient_scope', field: 'to' })
    }
    const deep = await list(t.api, `to=${encodeURIComponent(ago(35))}`)
    expect(deep.status).toBe(200)
    expect(idsOf(deep)).toEqual([ids.D])
    expect(deep.headers.get('ratelimit-policy')).toMatch(/^"backfill"/)
    // Unchanged: a recent from with or without to, and updated_since (which the contract opens fully).
    const window = await list(readOnly, `from=${encodeURIComponent(ago(5))}&to=${encodeURIComponent(ago(1.5))}`)
    expect(window.status).toBe(200)
    expect(idsOf(window)).toEqual([ids.B, ids.E])
    expect(window.headers.get('ratelimit-policy')).toMatch(/^"read"/)
    expect((await list(readOnly, `from=${encodeURIComponent(ago(5))}`)).status).toBe(200)
    expect(
      err(await list(readOnly, `from=${encodeURIComponent(ago(45))}&to=${encodeURIComponent(ago(35))}`)),
    ).toMatchObject({ code: 'insufficient_scope', field: 'from' })
    const since = await list(
      readOnly,
      `updated_since=${encodeURIComponent(ago(0.5))}&to=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
    )
    expect(since.status).toBe(200)
    expect(idsOf(since)).toEqual([ids.A, ids.B, ids.E, ids.C, ids.D])
  })

  it('lets a summaries-only key list with include=summary only', async () => {
    verifies('conversations.list', 'conversations.read')
    for (const qs of ['', 'include=summary,identity', 'include=metrics']) {
      const r = await list(summariesOnly, qs)
      expect(r.status, qs).toBe(403)
      expect(err(r).code).toBe('insufficient_scope')
    }
    const ok = await list(summariesOnly, 'include=summary')
    expect(ok.status).toBe(200)
    expect(ok.body.data[0].summary.text).toContain('leak')
    expect(ok.body.data[0]).not.toHaveProperty('identity')
    expect(err(await summariesOnly.get(`/conversations/${ids.A}`)).code).toBe('insufficient_scope')
    const s = await summariesOnly.get(`/conversations/${ids.B}/summary`)
    expect(s.status).toBe(200)
    expect(s.body).toMatchObject({
      conversation_id: ids.B,
      summary_status: 'ready',
      summary: { outcome: 'lead_captured', escalated_to_human: { value: true } },
    })
    expect((await readOnly.get(`/conversations/${ids.B}/summary`)).status).toBe(200)
  })

  it('pages with a signed cursor bound to the filters, sort, limit and credential', async () => {
    verifies('conversations.list', 'cursor.signed-and-bound')
    const p1 = await list(t.api, 'limit=2')
    expect(idsOf(p1)).toEqual([ids.A, ids.B])
    expect(p1.body.pagination.has_more).toBe(true)
    const cursor = encodeURIComponent(p1.body.pagination.next_cursor)
    const p2 = await list(t.api, `limit=2&cursor=${cursor}`)
    expect(idsOf(p2)).toEqual([ids.E, ids.C])
    // The window of page 1 travels with the cursor.
    expect(p2.body.meta).toEqual(
      p1.body.meta.request_id === p2.body.meta.request_id
        ? p2.body.meta
        : { ...p1.body.meta, request_id: p2.body.meta.request_id },
    )
    expect(p2.body.pagination).toMatchObject({ has_more: false, next_cursor: null })
    for (const [api, qs] of [
      [t.api, `limit=3&cursor=${cursor}`],
      [t.api, `limit=2&sort=-updated_at&cursor=${cursor}`],
      [t.api, `limit=2&channel=import&cursor=${cursor}`],
      [readOnly, `limit=2&cursor=${cursor}`],
    ] as const) {
      const r = await list(api, qs)
      expect(r.status, qs).toBe(400)
      expect(err(r).code).toBe('invalid_cursor')
    }
    const asc1 = await list(t.api, 'limit=3&sort=started_at')
    const asc2 = await list(
      t.api,
      `limit=3&sort=started_at&cursor=${encodeURIComponent(asc1.body.pagination.next_cursor)}`,
    )
    expect([...idsOf(asc1), ...idsOf(asc2)]).toEqual([ids.C, ids.E, ids.B, ids.A])
  })
})

describe('GET /conversations/{conv}', () => {
  it('answers all four includes by default, and only those asked for', async () => {
    verifies('conversations.read')
    const r = await t.api.get(`/conversations/${ids.A}`)
    expect(r.status).toBe(200)
    expect(r.body.transcript).toHaveLength(2)
    expect(r.body.transcript[0]).toEqual({
      turn_index: 0,
      speaker: 'agent',
      text: 'Quill Plumbing, how can I help?',
      timestamp: expect.any(String),
      confidence: null,
      audio_offset_ms: null,
      audio_duration_ms: null,
      latency_ms: null,
      latency_breakdown: null,
      turn_type: 'answer',
      detected_intent: null,
      detected_language: null,
      sources: null,
      unanswered: false,
      human_agent_id: null,
    })
    expect(r.body.transcript[1]).toMatchObject({ speaker: 'visitor', turn_type: 'message', text: PII })
    expect(r.body.metrics).toMatchObject({ duration_s: 120 })
    expect(r.body).toMatchObject({ redacted: false, redaction_rules_applied: [], identity: { phone_e164: PHONE } })
    expect(r.body).not.toHaveProperty('transcript_text')
    const only = await t.api.get(`/conversations/${ids.A}?include=summary`)
    expect(only.body).toHaveProperty('summary')
    for (const k of ['transcript', 'identity', 'metrics']) expect(only.body).not.toHaveProperty(k)
    expect(err(await t.api.get(`/conversations/${ids.A}?include=turns`)).code).toBe('unsupported_filter')
    expect(err(await t.api.get(`/conversations/${ids.A}?transcript_format=html`)).code).toBe('unsupported_filter')
    expect(err(await t.api.get(`/conversations/${ids.A}?redact=yes`)).code).toBe('validation_error')
  })

  it('adds transcript_text with transcript_format=text', async () => {
    verifies('conversations.read')
    const r = await t.api.get(`/conversations/${ids.A}?transcript_format=text`)
    expect(r.body.transcript_text).toBe(`agent: Quill Plumbing, how can I help?\nvisitor: ${PII}`)
  })

  it('redacts e-mails, phones, cards and IBANs keeping the last 2 characters, by default when the account says so', async () => {
    verifies('conversations.redaction')
    const masked =
      'Reach me at ******************om or *************00, card *****************11, IBAN *************************00.'
    const r = await t.api.get(`/conversations/${ids.A}?redact=true&transcript_format=text`)
    expect(r.body.redacted).toBe(true)
    expect(r.body.redaction_rules_applied).toEqual(['email', 'phone', 'card_number', 'iban'])
    expect(r.body.transcript[1].text).toBe(masked)
    expect(r.body.transcript_text).toContain(masked)
    expect(r.body.summary.text).toBe(`Caller asked about a leak. ${masked}`)
    expect(r.body.identity).toEqual({ ...NO_IDENTITY, phone_e164: '**********01', email: '******************om' })
    expect((await t.api.patch(`/accounts/${t.accountId}`, { default_redaction: true })).status).toBe(200)
    try {
      const d = await t.api.get(`/conversations/${ids.A}`)
      expect(d.body.redacted).toBe(true)
      expect(d.body.transcript[1].text).toBe(masked)
      expect((await t.api.get(`/conversations/${ids.A}?redact=false`)).body.transcript[1].text).toBe(PII)
    } finally {
      await t.api.patch(`/accounts/${t.accountId}`, { default_redaction: false })
    }
  })

  it('is 404 for another account, 400 invalid_id for a malformed id, 404 for a recording that does not exist', async () => {
    verifies('conversations.read', 'tenancy.isolation')
    for (const path of [
      `/conversations/${ids.A}`,
      `/conversations/${ids.A}/summary`,
      `/conversations/${ids.A}/recording`,
    ]) {
      const r = await other.api.get(path)
      expect(r.status, path).toBe(404)
      expect(err(r).code).toBe('not_found')
    }
    expect((await other.api.delete(`/conversations/${ids.A}`)).status).toBe(404)
    for (const bad of ['conv_x1', 'conv_p', 'agt_1', 'conv_u1a'])
      expect(err(await t.api.get(`/conversations/${bad}`)).code, bad).toBe('invalid_id')
    const rec = await t.api.get(`/conversations/${ids.A}/recording`)
    expect(rec.status).toBe(404)
    expect(err(rec).code).toBe('not_found')
    const forged = await master.get('/media/recordings/x.mp3?token=nope')
    expect(forged.status).toBe(400)
    expect(err(forged).code).toBe('invalid_token')
  })
})

describe('soft delete', () => {
  it('DELETE answers 204; reads answer 410; lists leave it out; the tombstone is listed; deleting again is 410', async () => {
    verifies('conversations.deleted')
    const d = await t.api.delete(`/conversations/${ids.E}`)
    expect(d.status).toBe(204)
    for (const path of [
      `/conversations/${ids.E}`,
      `/conversations/${ids.E}/summary`,
      `/conversations/${ids.E}/recording`,
    ]) {
      const r = await t.api.get(path)
      expect(r.status, path).toBe(410)
      expect(err(r).code).toBe('conversation_deleted')
    }
    expect(err(await t.api.delete(`/conversations/${ids.E}`)).code).toBe('conversation_deleted')
    expect(idsOf(await list(t.api))).toEqual([ids.A, ids.B, ids.C])
    // /conversations/deleted is matched before /conversations/{conv} (which would answer invalid_id).
    const tomb = await t.api.get('/conversations/deleted')
    expect(tomb.status).toBe(200)
    expect(tomb.body.data).toEqual([
      { conversation_id: ids.E, account_id: t.accountId, deleted_at: expect.any(String), reason: 'api' },
    ])
    expect(tomb.body.pagination).toEqual({ limit: 50, has_more: false, next_cursor: null })
    expect(
      (
        await t.api.get(
          `/conversations/deleted?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
        )
      ).body.data,
    ).toEqual([])
    expect((await other.api.get('/conversations/deleted')).body.data).toEqual([])
    expect(err(await t.api.get('/conversations/deleted?limit=201')).code).toBe('invalid_limit')
    expect(err(await t.api.get('/conversations/deleted?since=now')).code).toBe('invalid_date')
    expect(err(await t.api.get('/conversations/deleted?cursor=x')).code).toBe('invalid_cursor')
  })

  it('pages tombstones newest first', async () => {
    verifies('conversations.deleted')
    const extra: string[] = []
    for (let i = 0; i < 2; i++) {
      const r = await importCall(t.api, { started_at: ago(4) })
      extra.push(r.body.conversation_id)
      expect((await t.api.delete(`/conversations/${r.body.conversation_id}`)).status).toBe(204)
    }
    const p1 = await t.api.get('/conversations/deleted?limit=2')
    expect(p1.body.data.map((x: any) => x.conversation_id)).toEqual([extra[1], extra[0]])
    const p2 = await t.api.get(
      `/conversations/deleted?limit=2&cursor=${encodeURIComponent(p1.body.pagination.next_cursor)}`,
    )
    expect(p2.body.data.map((x: any) => x.conversation_id)).toEqual([ids.E])
    expect(p2.body.pagination.has_more).toBe(false)
  })
})
