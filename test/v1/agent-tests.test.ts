// Agent tests and test runs over HTTP against the shared server (local engine, offline speech, outbox mail):
// the tst_ resource and its checks (caps, linear-time regex patterns), tests made from a conversation, runs
// grading every assertion type passing and failing, repeat, a phone test through the simulated call path,
// dry tools (the mail outbox stays empty while a real chat mails), runs leaving no conversation and no usage,
// the test_run.completed webhook, the MCP tools and tenant isolation.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, expectError, type Api } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { startReceiver, type Receiver } from '../helpers/receiver'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { until } from '../helpers/wait'
import { verifies } from '../requirements'

const LEADS = 'leads@quokka.example'
const NOTIFY = 'owner@quokka.example'
const OPEN = 'What time does the bakery open every day?'
const CALL_ME = 'Please call me back, my email is jane.doe@example.com'
const SUBMARINE = 'Do you repair submarines?'
const HUMAN = 'I want to talk to a human please'
const TEST_KEYS = ['test_id', 'agent_id', 'name', 'surface', 'turns', 'reference_answers', 'created_at', 'updated_at']
const RUN_KEYS = [
  'run_id',
  'agent_id',
  'prompt_version',
  'status',
  'total',
  'passed',
  'failed',
  'skipped',
  'pass_rate',
  'error',
  'created_at',
  'finished_at',
  'results',
]

const keysOf = (o: Record<string, unknown>) =>
  Object.keys(o)
    .filter((k) => k !== 'meta')
    .sort()

/** Asks for a run and waits for its end; answers the finished run. */
async function finishedRun(api: Api, agentId: string, body: Record<string, unknown> = {}, timeoutMs = 90_000) {
  const r = await api.post(`/agents/${agentId}/test-runs`, body)
  expect(r.status, r.text).toBe(202)
  expect(r.body).toMatchObject({ run_id: expect.stringMatching(/^run_\d+$/), status: 'queued', finished_at: null })
  return until(
    `run ${r.body.run_id} to finish`,
    async () => {
      const g = await api.get(`/test-runs/${r.body.run_id}`)
      expect(g.status, g.text).toBe(200)
      if (!['passed', 'failed', 'error'].includes(g.body.status)) return null
      const { meta: _, ...run } = g.body
      return run
    },
    timeoutMs,
    250,
  )
}

describe('agent tests and test runs (shared server)', () => {
  const base = inject('base')
  const origin = inject('origin')
  const master = createApi(base, inject('masterKey'))
  let t: Tenant
  let other: Tenant
  let site: TestSite
  let rx: Receiver
  let agent: string
  let second: string

  beforeAll(async () => {
    site = await serveSite({
      '/': {
        body: html(
          'Quokka Bakery',
          '<h1>Quokka Bakery</h1><p>Quokka Bakery opens every day at seven in the morning.</p>' +
            '<p>Our rye sourdough loaf costs nine dollars.</p><p>We deliver cakes anywhere in Fremantle for free.</p>',
        ),
      },
    })
    rx = await startReceiver()
    ;[t, other] = await Promise.all([createTenant(master), createTenant(master)])
    ;[agent, second] = await Promise.all([
      buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' }),
      buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' }),
    ])
    const p = await t.api.patch(`/agents/${agent}`, {
      capabilities: ['capture_lead', 'transfer_call'],
      capability_settings: {
        lead_emails: [LEADS],
        transfer_directory: [{ name: 'Front desk', phone: '+14155550178' }],
      },
      notification_emails: [NOTIFY],
    })
    expect(p.status, p.text).toBe(200)
  }, 120_000)
  afterAll(async () => {
    await site?.close()
    await rx?.close()
  })

  it('creates, lists, reads, patches and deletes tests, refusing bad input by field', async () => {
    verifies('quality.tests.crud')
    const c = await t.api.post(`/agents/${second}/tests`, {
      name: '  Opening hours ',
      turns: [{ user: OPEN, expect: [{ type: 'contains', value: 'seven' }] }, { user: 'Thanks!' }],
    })
    expect(c.status, c.text).toBe(201)
    expect(keysOf(c.body)).toEqual([...TEST_KEYS].sort())
    expect(c.body).toMatchObject({
      test_id: expect.stringMatching(/^tst_\d+$/),
      agent_id: second,
      name: 'Opening hours',
      surface: 'chat',
      turns: [
        { user: OPEN, expect: [{ type: 'contains', value: 'seven' }] },
        { user: 'Thanks!', expect: [] },
      ],
      reference_answers: null,
    })
    const id = c.body.test_id
    const b = await t.api.post(`/agents/${second}/tests`, { name: 'B', surface: 'phone', turns: [{ user: 'Hi' }] })
    const d = await t.api.post(`/agents/${second}/tests`, { name: 'C', surface: 'voice_chat', turns: [{ user: 'Hi' }] })
    expect([b.status, d.status]).toEqual([201, 201])

    const first = await t.api.get(`/agents/${second}/tests?limit=2`)
    expect(first.status, first.text).toBe(200)
    expect(first.body.pagination).toMatchObject({ limit: 2, has_more: true })
    const next = await t.api.get(
      `/agents/${second}/tests?limit=2&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`,
    )
    expect([...first.body.data, ...next.body.data].map((x: any) => x.test_id)).toEqual([
      d.body.test_id,
      b.body.test_id,
      id,
    ])

    expect((await t.api.get(`/tests/${id}`)).body).toMatchObject({ test_id: id, name: 'Opening hours' })
    const p = await t.api.patch(`/tests/${id}`, { name: 'Hours', reference_answers: ['We open at seven.'] })
    expect(p.status, p.text).toBe(200)
    expect(p.body).toMatchObject({ name: 'Hours', reference_answers: ['We open at seven.'], turns: c.body.turns })
    expect(Date.parse(p.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(c.body.updated_at))

    expectError(await t.api.patch(`/tests/${id}`, {}), 400, 'empty_update')
    expectError(await t.api.patch(`/tests/${id}`, { colour: 'red' }), 400, 'unsupported_field', 'colour')
    expectError(
      await t.api.post(`/agents/${second}/tests`, { turns: [{ user: 'x' }] }),
      400,
      'validation_error',
      'name',
    )
    expectError(await t.api.post(`/agents/${second}/tests`, { name: 'x', turns: [] }), 400, 'validation_error', 'turns')
    expectError(
      await t.api.post(`/agents/${second}/tests`, { name: 'x', surface: 'fax', turns: [{ user: 'x' }] }),
      400,
      'validation_error',
      'surface',
    )
    expectError(
      await t.api.post(`/agents/${second}/tests`, { name: 'x', turns: [{ user: 'x', expect: [{ type: 'smells' }] }] }),
      400,
      'validation_error',
      'turns.0.expect.0.type',
    )
    expectError(
      await t.api.post(`/agents/${second}/tests`, {
        name: 'x',
        turns: [{ user: 'x' }, { user: 'y', expect: [{ type: 'contains', value: 'a', pattern: 'b' }] }],
      }),
      400,
      'unsupported_field',
      'turns.1.expect.0.pattern',
    )
    expectError(
      await t.api.post(`/agents/${second}/tests`, {
        name: 'x',
        turns: [{ user: 'x', expect: [{ type: 'escalated', value: 'yes' }] }],
      }),
      400,
      'validation_error',
      'turns.0.expect.0.value',
    )
    expectError(
      await t.api.post('/agents/agt_999999999/tests', { name: 'x', turns: [{ user: 'x' }] }),
      404,
      'agent_not_found',
    )
    expectError(await t.api.get('/tests/tst_x'), 400, 'invalid_id')

    // Scopes: a read-only key reads tests but does not write them.
    const ro = createApi(
      base,
      (await master.post(`/users/${t.userId}/credentials`, { name: 'ro', scopes: ['agents:read'] })).body.secret,
    )
    expect((await ro.get(`/tests/${id}`)).status).toBe(200)
    expectError(await ro.patch(`/tests/${id}`, { name: 'z' }), 403, 'insufficient_scope')
    expectError(await ro.post(`/agents/${second}/test-runs`, {}), 403, 'insufficient_scope')

    expect((await t.api.delete(`/tests/${id}`)).status).toBe(204)
    expectError(await t.api.get(`/tests/${id}`), 404, 'not_found')
    expectError(await t.api.delete(`/tests/${id}`), 404, 'not_found')
  })

  it('refuses regex patterns the linear-time engine cannot run, and longer than 200 characters', async () => {
    verifies('quality.tests.regex-compile')
    const withPattern = (pattern: string, at = 0) => ({
      name: 'regex',
      turns: [
        { user: 'one', expect: [{ type: 'contains', value: 'x' }] },
        {
          user: 'two',
          expect: [
            { type: 'contains', value: 'y' },
            { type: 'regex', pattern },
          ],
        },
      ].slice(at),
    })
    for (const pattern of ['(a)\\1', '(?=seven)', '(?<!no )seven', 'a{1001}', '((.*a){30}){30}'])
      expectError(
        await t.api.post(`/agents/${second}/tests`, withPattern(pattern)),
        400,
        'validation_error',
        'turns.1.expect.1.pattern',
      )
    expectError(
      await t.api.post(`/agents/${second}/tests`, withPattern('a'.repeat(201))),
      400,
      'validation_error',
      'turns.1.expect.1.pattern',
    )
    const ok = await t.api.post(`/agents/${second}/tests`, withPattern('(a+)+$'))
    expect(ok.status, ok.text).toBe(201)
    const bad = await t.api.patch(`/tests/${ok.body.test_id}`, withPattern('(x)\\1', 1))
    expectError(bad, 400, 'validation_error', 'turns.0.expect.1.pattern')
    expect(bad.body.error.message).toMatch(/linear-time|RE2/)
    expect((await t.api.delete(`/tests/${ok.body.test_id}`)).status).toBe(204)
  })

  it('holds at most 100 tests per agent and 20 turns per test', async () => {
    verifies('quality.tests.caps')
    const turns = Array.from({ length: 21 }, (_, i) => ({ user: `turn ${i}` }))
    expectError(await t.api.post(`/agents/${second}/tests`, { name: 'long', turns }), 400, 'validation_error', 'turns')
    const have = (await t.api.get(`/agents/${second}/tests?limit=100`)).body.data.length as number
    for (let i = have; i < 100; i++) {
      const r = await t.api.post(`/agents/${second}/tests`, { name: `t${i}`, turns: turns.slice(0, 20) })
      expect(r.status, r.text).toBe(201)
    }
    const over = await t.api.post(`/agents/${second}/tests`, { name: 'one too many', turns: [{ user: 'x' }] })
    expectError(over, 403, 'plan_limit_reached')
    const all = await t.api.get(`/agents/${second}/tests?limit=100`)
    expect(all.body.pagination.has_more).toBe(false)
    expect(all.body.data).toHaveLength(100)
    // Another agent is not held back, and a delete frees a place.
    expect((await t.api.post(`/agents/${agent}/tests`, { name: 'free', turns: [{ user: 'x' }] })).status).toBe(201)
    await t.api.delete(`/tests/${(await t.api.get(`/agents/${agent}/tests`)).body.data[0].test_id}`)
    expect((await t.api.delete(`/tests/${all.body.data[0].test_id}`)).status).toBe(204)
    expect((await t.api.post(`/agents/${second}/tests`, { name: 'back in', turns: [{ user: 'x' }] })).status).toBe(201)
  })

  it('grades every assertion type, passing and failing, on the answer of its turn', async () => {
    verifies('quality.runs.assertions', 'quality.runs.lifecycle')
    const failing = await t.api.post(`/agents/${agent}/tests`, {
      name: 'Every assertion',
      turns: [
        {
          user: OPEN,
          expect: [
            { type: 'contains', value: 'SEVEN in the morning' },
            { type: 'contains', value: 'midnight' },
            { type: 'not_contains', value: 'midnight' },
            { type: 'not_contains', value: 'Seven' },
            { type: 'regex', pattern: '(?i)opens every day at \\w+' },
            { type: 'regex', pattern: '^Closed' },
            { type: 'unanswered', value: false },
            { type: 'unanswered', value: true },
            { type: 'tool_not_called', name: 'capture_lead' },
            { type: 'judge', rubric: 'The answer gives the opening time.' },
          ],
        },
        {
          user: CALL_ME,
          expect: [
            { type: 'tool_called', name: 'capture_lead' },
            { type: 'tool_not_called', name: 'capture_lead' },
            { type: 'tool_called', name: 'transfer_call' },
            { type: 'escalated', value: false },
          ],
        },
        {
          user: SUBMARINE,
          expect: [
            { type: 'unanswered', value: true },
            { type: 'escalated', value: true },
          ],
        },
        {
          user: HUMAN,
          expect: [
            { type: 'escalated', value: true },
            { type: 'escalated', value: false },
          ],
        },
      ],
    })
    expect(failing.status, failing.text).toBe(201)
    const passing = await t.api.post(`/agents/${agent}/tests`, {
      name: 'Hours',
      turns: [
        {
          user: OPEN,
          expect: [
            { type: 'contains', value: 'seven' },
            { type: 'unanswered', value: false },
          ],
        },
      ],
    })
    const unchecked = await t.api.post(`/agents/${agent}/tests`, {
      name: 'Only a rubric',
      turns: [{ user: OPEN, expect: [{ type: 'judge', rubric: 'Polite.' }] }],
    })
    const ids = [failing.body.test_id, passing.body.test_id, unchecked.body.test_id]
    const run = await finishedRun(t.api, agent, { test_ids: ids })
    expect(Object.keys(run).sort()).toEqual([...RUN_KEYS].sort())
    expect(run).toMatchObject({
      agent_id: agent,
      status: 'failed',
      total: 3,
      passed: 1,
      failed: 1,
      skipped: 1,
      pass_rate: 0.5,
      error: null,
      finished_at: expect.any(String),
    })
    const byTest = Object.fromEntries(run.results.map((r: any) => [r.test_id, r]))
    expect(byTest[passing.body.test_id]).toMatchObject({ attempt: 1, status: 'passed', error: null })
    expect(byTest[unchecked.body.test_id]).toMatchObject({ attempt: 1, status: 'skipped' })
    const attempt = byTest[failing.body.test_id]
    expect(attempt.status).toBe('failed')
    const [hours, lead, submarine, human] = attempt.turns
    expect(hours).toMatchObject({ user: OPEN, unanswered: false, escalated: false, tools: [] })
    expect(hours.answer).toMatch(/seven in the morning/)
    const verdicts = (turn: any) => turn.assertions.map((a: any) => [a.type, a.passed])
    expect(verdicts(hours)).toEqual([
      ['contains', true],
      ['contains', false],
      ['not_contains', true],
      ['not_contains', false],
      ['regex', true],
      ['regex', false],
      ['unanswered', true],
      ['unanswered', false],
      ['tool_not_called', true],
      ['judge', null],
    ])
    for (const a of hours.assertions) expect(a.detail, JSON.stringify(a)).toMatch(/\S/)
    expect(hours.assertions[9].detail).toMatch(/local engine/)
    expect(verdicts(lead)).toEqual([
      ['tool_called', true],
      ['tool_not_called', false],
      ['tool_called', false],
      ['escalated', true],
    ])
    expect(lead.tools).toEqual([
      expect.objectContaining({
        name: 'capture_lead',
        ok: true,
        arguments: expect.objectContaining({ email: 'jane.doe@example.com' }),
      }),
    ])
    expect(verdicts(submarine)).toEqual([
      ['unanswered', true],
      ['escalated', false],
    ])
    expect(verdicts(human)).toEqual([
      ['escalated', true],
      ['escalated', false],
    ])
    expect(human.escalated).toBe(true)

    // The run list: newest first, without results, keyset pages.
    const later = await finishedRun(t.api, agent, { test_ids: [passing.body.test_id] })
    expect(later).toMatchObject({ status: 'passed', total: 1, passed: 1, failed: 0, pass_rate: 1 })
    const page = await t.api.get(`/agents/${agent}/test-runs?limit=1`)
    expect(page.status, page.text).toBe(200)
    expect(page.body.data[0].run_id).toBe(later.run_id)
    expect(page.body.data[0]).not.toHaveProperty('results')
    const rest = await t.api.get(
      `/agents/${agent}/test-runs?limit=1&cursor=${encodeURIComponent(page.body.pagination.next_cursor)}`,
    )
    expect(rest.body.data[0].run_id).toBe(run.run_id)

    expectError(
      await t.api.post(`/agents/${agent}/test-runs`, { test_ids: ['tst_999999999'] }),
      400,
      'validation_error',
      'test_ids',
    )
    expectError(await t.api.post(`/agents/${agent}/test-runs`, { test_ids: [] }), 400, 'validation_error', 'test_ids')
    expectError(
      await t.api.post(`/agents/${agent}/test-runs`, { test_ids: [ids[0], ids[0]] }),
      400,
      'validation_error',
      'test_ids',
    )
    expectError(await t.api.post(`/agents/${agent}/test-runs`, { bogus: 1 }), 400, 'unsupported_field', 'bogus')
    const empty = await t.api.post(`/accounts/${t.accountId}/agents/build`, {
      website_url: `${site.origin}/`,
      voice_id: (await t.api.get('/voices')).body.data[0].voice_id,
    })
    expectError(await t.api.post(`/agents/${empty.body.agent_id}/test-runs`, {}), 400, 'validation_error', 'test_ids')
    expectError(await t.api.get('/test-runs/run_999999999'), 404, 'not_found')
  })

  it('repeats each test, one result per attempt', async () => {
    verifies('quality.runs.repeat')
    const a = await t.api.post(`/agents/${agent}/tests`, {
      name: 'Loaf',
      turns: [{ user: 'How much is the rye sourdough loaf?', expect: [{ type: 'contains', value: 'nine dollars' }] }],
    })
    const b = await t.api.post(`/agents/${agent}/tests`, {
      name: 'Delivery',
      turns: [{ user: 'Do you deliver cakes to Fremantle?', expect: [{ type: 'not_contains', value: 'Fremantle' }] }],
    })
    const run = await finishedRun(t.api, agent, { test_ids: [a.body.test_id, b.body.test_id], repeat: 3 })
    expect(run).toMatchObject({ total: 6, passed: 3, failed: 3, skipped: 0, pass_rate: 0.5, status: 'failed' })
    expect(run.results.map((r: any) => [r.test_id, r.attempt, r.status])).toEqual([
      [a.body.test_id, 1, 'passed'],
      [a.body.test_id, 2, 'passed'],
      [a.body.test_id, 3, 'passed'],
      [b.body.test_id, 1, 'failed'],
      [b.body.test_id, 2, 'failed'],
      [b.body.test_id, 3, 'failed'],
    ])
    // The local engine answers the same every time.
    expect(new Set(run.results.map((r: any) => r.turns[0].answer)).size).toBe(2)
    for (const repeat of [0, 11, 1.5, '2'])
      expectError(await t.api.post(`/agents/${agent}/test-runs`, { repeat }), 400, 'validation_error', 'repeat')
  })

  it('runs tools dry and bills nothing: no mail, no conversation, no usage, no chat quota', async () => {
    verifies('quality.runs.dry-tools', 'quality.runs.not-billed')
    const window = () => {
      const from = new Date(Date.now() - 3_600_000).toISOString()
      const to = new Date(Date.now() + 3_600_000).toISOString()
      return `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`
    }
    const snapshot = async () => ({
      mails: (await t.api.get('/mail/outbox')).body.data.length as number,
      conversations: (await t.api.get(`/conversations?limit=200&${window()}`)).body.data.length as number,
      usage: (await t.api.get(`/accounts/${t.accountId}/usage?${window()}&group_by=channel`)).body.data,
      chat: (await t.api.get(`/accounts/${t.accountId}/limits`)).body.quotas.chat_messages.used as number,
    })
    const before = await snapshot()
    const lead = await t.api.post(`/agents/${agent}/tests`, {
      name: 'Lead and person',
      turns: [
        { user: CALL_ME, expect: [{ type: 'tool_called', name: 'capture_lead' }] },
        { user: HUMAN, expect: [{ type: 'escalated', value: true }] },
      ],
    })
    const phone = await t.api.post(`/agents/${agent}/tests`, {
      name: 'Phone hours',
      surface: 'phone',
      turns: [{ user: OPEN, expect: [{ type: 'contains', value: 'seven' }] }],
    })
    const run = await finishedRun(t.api, agent, { test_ids: [lead.body.test_id, phone.body.test_id] })
    expect(run, JSON.stringify(run)).toMatchObject({ status: 'passed', passed: 2 })
    expect(run.results[0].turns[0].tools).toEqual([
      expect.objectContaining({ name: 'capture_lead', ok: true, message: expect.any(String) }),
    ])
    const after = await snapshot()
    expect(after).toEqual(before)

    // The same words in a real chat do mail the lead and the escalation, and are a conversation with usage.
    const conv = await t.api.post('/conversations', { agent_id: agent })
    expect(conv.status, conv.text).toBe(201)
    for (const text of [CALL_ME, HUMAN])
      expect((await t.api.post(`/conversations/${conv.body.conversation_id}/messages`, { text })).status).toBe(200)
    const mailed = await until('the real chat to mail', async () => {
      const m = (await t.api.get('/mail/outbox')).body.data as any[]
      return m.length >= before.mails + 2 ? m : null
    })
    expect(mailed.flatMap((m) => m.to)).toEqual(expect.arrayContaining([LEADS, NOTIFY]))
    const real = await snapshot()
    expect(real.conversations).toBe(before.conversations + 1)
    expect(real.chat).toBe(before.chat + 2)
  })

  it('runs a phone test through the simulated call: the voice loop answers, a transfer is recorded dry', async () => {
    verifies('quality.runs.phone', 'quality.runs.not-billed')
    const conversations = async () =>
      (await t.api.get(`/conversations?agent_id=${agent}&channel=phone_inbound`)).body.data.length
    const before = await conversations()
    const test = await t.api.post(`/agents/${agent}/tests`, {
      name: 'Caller',
      surface: 'phone',
      turns: [
        {
          user: OPEN,
          expect: [
            { type: 'contains', value: 'seven in the morning' },
            { type: 'unanswered', value: false },
          ],
        },
        { user: 'How much is the rye sourdough loaf?', expect: [{ type: 'regex', pattern: 'nine\\s+dollars' }] },
        {
          user: HUMAN,
          expect: [
            { type: 'escalated', value: true },
            { type: 'tool_called', name: 'transfer_call' },
          ],
        },
      ],
    })
    expect(test.status, test.text).toBe(201)
    const run = await finishedRun(t.api, agent, { test_ids: [test.body.test_id] })
    expect(run, JSON.stringify(run.results)).toMatchObject({ status: 'passed', passed: 1, total: 1 })
    const turns = run.results[0].turns
    // What the agent heard is what the caller said: the offline speech round trip is exact.
    expect(turns.map((x: any) => x.user)).toEqual([OPEN, 'How much is the rye sourdough loaf?', HUMAN])
    expect(turns[0].answer).toMatch(/seven in the morning/)
    expect(turns[1].answer).toMatch(/nine dollars/)
    expect(turns[2]).toMatchObject({
      escalated: true,
      tools: [
        expect.objectContaining({
          name: 'transfer_call',
          ok: true,
          arguments: expect.objectContaining({ destination: 'Front desk' }),
        }),
      ],
    })
    expect(await conversations()).toBe(before)
  })

  it('makes a test from a real conversation, which then runs', async () => {
    verifies('quality.tests.from-conversation')
    const conv = await t.api.post('/conversations', { agent_id: agent })
    const id = conv.body.conversation_id
    for (const text of [OPEN, 'How much is the rye sourdough loaf?'])
      expect((await t.api.post(`/conversations/${id}/messages`, { text })).status).toBe(200)
    const transcript = (await t.api.get(`/conversations/${id}?include=transcript`)).body.transcript as any[]
    const made = await t.api.post(`/agents/${agent}/tests/from-conversation`, { conversation_id: id })
    expect(made.status, made.text).toBe(201)
    expect(made.body).toMatchObject({
      name: `From ${id}`,
      surface: 'chat',
      turns: [
        { user: OPEN, expect: [] },
        { user: 'How much is the rye sourdough loaf?', expect: [] },
      ],
      reference_answers: transcript.filter((x) => x.speaker === 'agent' && x.turn_type === 'answer').map((x) => x.text),
    })
    expect(made.body.reference_answers[0]).toMatch(/seven/)
    const run = await finishedRun(t.api, agent, { test_ids: [made.body.test_id] })
    expect(run).toMatchObject({ status: 'passed', skipped: 1, pass_rate: null })
    expect(run.results[0].turns.map((x: any) => x.answer)).toEqual(made.body.reference_answers)

    expectError(
      await t.api.post(`/agents/${second}/tests/from-conversation`, { conversation_id: id }),
      400,
      'validation_error',
      'conversation_id',
    )
    expectError(
      await t.api.post(`/agents/${agent}/tests/from-conversation`, { conversation_id: 'conv_p999999999' }),
      404,
      'not_found',
    )
    const writer = createApi(
      base,
      (await master.post(`/users/${t.userId}/credentials`, { name: 'w', scopes: ['agents:read', 'agents:write'] })).body
        .secret,
    )
    expectError(
      await writer.post(`/agents/${agent}/tests/from-conversation`, { conversation_id: id }),
      403,
      'insufficient_scope',
    )
  })

  it('fires test_run.completed with the run, signed, once per run', async () => {
    verifies('quality.runs.event')
    const hook = await t.api.post('/webhooks/endpoints', { url: rx.url('/runs'), events: ['test_run.completed'] })
    expect(hook.status, hook.text).toBe(201)
    const test = await t.api.post(`/agents/${agent}/tests`, {
      name: 'Event',
      turns: [{ user: OPEN, expect: [{ type: 'contains', value: 'seven' }] }],
    })
    const run = await finishedRun(t.api, agent, { test_ids: [test.body.test_id] })
    const got = await rx.waitFor(
      (r) => r.some((x) => x.json?.data?.run_id === run.run_id && x.path === '/runs'),
      'the event',
    )
    const mine = got.filter((x) => x.path === '/runs' && x.json?.data?.run_id === run.run_id)
    expect(mine).toHaveLength(1)
    expect(mine[0].headers['x-svc-event']).toBe('test_run.completed')
    expect(mine[0].headers['x-svc-signature']).toMatch(/^v1=[0-9a-f]{64}/)
    expect(mine[0].json).toMatchObject({ type: 'test_run.completed', account_id: t.accountId })
    expect(mine[0].json.data).toEqual(run)
    // No conversation.* event for the run's turns.
    expect(rx.received.filter((x) => x.json?.type?.startsWith('conversation.'))).toEqual([])
  })

  it('runs tests and reads the run through the MCP tools', async () => {
    verifies('quality.runs.mcp')
    const client = new Client({ name: 'svc-e2e', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${t.key}` } },
      }),
    )
    try {
      const { tools } = await client.listTools()
      const run = tools.find((x) => x.name === 'run_agent_tests')
      expect(run?.inputSchema.properties).toMatchObject({
        agent_id: expect.any(Object),
        test_ids: expect.any(Object),
        prompt_version: expect.any(Object),
        repeat: expect.any(Object),
      })
      expect(tools.find((x) => x.name === 'get_test_run')?.annotations).toMatchObject({ readOnlyHint: true })
      const test = (await t.api.get(`/agents/${agent}/tests?limit=100`)).body.data.find((x: any) => x.name === 'Hours')
      const started = (await client.callTool({
        name: 'run_agent_tests',
        arguments: { agent_id: agent, test_ids: [test.test_id], repeat: 2 },
      })) as any
      expect(started.isError, started.content?.[0]?.text).toBeFalsy()
      expect(started.structuredContent).toMatchObject({ status: 'queued', total: 2 })
      const done = await until('the run through MCP', async () => {
        const r = (await client.callTool({
          name: 'get_test_run',
          arguments: { run_id: started.structuredContent.run_id },
        })) as any
        expect(r.isError, r.content?.[0]?.text).toBeFalsy()
        return r.structuredContent.status === 'passed' ? r.structuredContent : null
      })
      expect(done).toMatchObject({ passed: 2, pass_rate: 1 })
      const bad = (await client.callTool({
        name: 'run_agent_tests',
        arguments: { agent_id: agent, repeat: 20 },
      })) as any
      expect(bad.isError).toBe(true)
      expect(bad.content[0].text).toMatch(/repeat/)
    } finally {
      await client.close()
    }
  })

  it("keeps another tenant's tests and runs apart: 404 everywhere", async () => {
    verifies('quality.tests.isolation')
    const test = (await t.api.get(`/agents/${agent}/tests?limit=1`)).body.data[0].test_id
    const run = (await t.api.get(`/agents/${agent}/test-runs?limit=1`)).body.data[0].run_id
    expectError(await other.api.get(`/tests/${test}`), 404, 'not_found')
    expectError(await other.api.patch(`/tests/${test}`, { name: 'mine' }), 404, 'not_found')
    expectError(await other.api.delete(`/tests/${test}`), 404, 'not_found')
    expectError(await other.api.get(`/test-runs/${run}`), 404, 'not_found')
    expectError(await other.api.get(`/agents/${agent}/tests`), 404, 'agent_not_found')
    expectError(
      await other.api.post(`/agents/${agent}/tests`, { name: 'x', turns: [{ user: 'x' }] }),
      404,
      'agent_not_found',
    )
    expectError(await other.api.get(`/agents/${agent}/test-runs`), 404, 'agent_not_found')
    expectError(await other.api.post(`/agents/${agent}/test-runs`, {}), 404, 'agent_not_found')
    expectError(await other.api.post(`/agents/${agent}/test-runs`, { test_ids: [test] }), 404, 'agent_not_found')
    // Their own agent cannot take this tenant's test or conversation either.
    const own = await buildAgent(other.api, other.accountId, `${site.origin}/`, { language: 'en' })
    expectError(
      await other.api.post(`/agents/${own}/test-runs`, { test_ids: [test] }),
      400,
      'validation_error',
      'test_ids',
    )
    const conv = (await t.api.get('/conversations?limit=1')).body.data[0].conversation_id
    expectError(
      await other.api.post(`/agents/${own}/tests/from-conversation`, { conversation_id: conv }),
      404,
      'not_found',
    )
    expect((await t.api.get(`/tests/${test}`)).status).toBe(200)
  })
})
