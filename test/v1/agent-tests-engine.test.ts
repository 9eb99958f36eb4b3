// Agent test runs on a server of its own with the openai engine pointed at a scripted fake model, which
// answers from the system prompt it is sent: a run talks to a candidate prompt version (chat and phone)
// without activating it; a judge rubric is graded by the engine (PASS passes, FAIL fails); a regex assertion
// (a+)+$ runs against an answer of 100,000 characters while GET /v1/health is probed; and the daily
// test_turns quota (SVC_QUOTAS test_turns=40 here) refuses a run that would pass it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApi, expectError, type Api } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { startFakeChat, type FakeChat } from '../helpers/fake-chat'
import { startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { sleep, until } from '../helpers/wait'
import { verifies } from '../requirements'

const A_LOT = 100_000

async function finishedRun(api: Api, agentId: string, body: Record<string, unknown>, timeoutMs = 120_000) {
  const r = await api.post(`/agents/${agentId}/test-runs`, body)
  expect(r.status, r.text).toBe(202)
  return until(
    `run ${r.body.run_id} to finish`,
    async () => {
      const g = await api.get(`/test-runs/${r.body.run_id}`)
      return ['passed', 'failed', 'error'].includes(g.body.status) ? g.body : null
    },
    timeoutMs,
    250,
  )
}

describe('agent test runs with a model engine', () => {
  let chat: FakeChat
  let server: TestServer
  let site: TestSite
  let t: Tenant
  let agent: string
  const tests: Record<string, string> = {}

  beforeAll(async () => {
    chat = await startFakeChat()
    chat.script = (req) => {
      const system = req.messages.find((m) => m.role === 'system')?.content ?? ''
      const last = req.messages.at(-1)?.content ?? ''
      if (system.startsWith('You grade one answer'))
        return {
          text: last.includes('Rubric: PASSME')
            ? 'PASS: the answer names the candidate.'
            : last.includes('Rubric: FAILME')
              ? 'FAIL: the answer is not about submarines.'
              : 'Perhaps.',
        }
      if (req.user.includes('say many a')) return { text: 'a'.repeat(A_LOT) }
      for (const marker of ['CANDIDATE-CHAT', 'LIVE-CHAT', 'CANDIDATE-PHONE', 'LIVE-PHONE'])
        if (system.includes(marker)) return { text: `${marker} speaking.` }
      return { text: 'Happy to help.' }
    }
    server = await startServer({
      env: {
        SVC_CHAT_ENGINE: 'openai',
        OPENAI_BASE_URL: chat.url,
        OPENAI_API_KEY: 'sk-fake-chat',
        OPENAI_MODEL: 'fake-small',
        OPENAI_LARGE_MODEL: 'fake-large',
        SVC_QUOTAS: 'test_turns=40',
        SVC_RATE_LIMITS: 'read=100000,write=100000,build=100000,calls=100000,chat=100000',
      },
    })
    site = await serveSite({
      '/': { body: html('Quokka Bakery', '<h1>Quokka Bakery</h1><p>Quokka Bakery bakes bread every day.</p>') },
    })
    t = await createTenant(createApi(server.base, server.masterKey))
    agent = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    // Each candidate deployed, then retired by the live version deployed after it.
    for (const [type, label, body] of [
      ['chat', 'cand-chat', 'CANDIDATE-CHAT: the new chat prompt.'],
      ['chat', 'live-chat', 'LIVE-CHAT: the chat prompt in use.'],
      ['phone', 'cand-phone', 'CANDIDATE-PHONE: the new phone prompt.'],
      ['phone', 'live-phone', 'LIVE-PHONE: the phone prompt in use.'],
    ]) {
      const r = await t.api.post(`/agents/${agent}/prompts`, { type, label, body })
      expect(r.status, r.text).toBe(201)
    }
    for (const [name, surface, user] of [
      ['chat', 'chat', 'Who is speaking?'],
      ['phone', 'phone', 'Who is speaking on the phone?'],
    ]) {
      const r = await t.api.post(`/agents/${agent}/tests`, { name, surface, turns: [{ user }] })
      expect(r.status, r.text).toBe(201)
      tests[name] = r.body.test_id
    }
  }, 180_000)
  afterAll(async () => {
    await server?.stop()
    await chat?.close()
    await site?.close()
  })

  it('talks to a candidate prompt version without activating it, on its own surface only', async () => {
    verifies('quality.runs.candidate')
    const answers = (run: any) => Object.fromEntries(run.results.map((r: any) => [r.test_id, r.turns[0].answer]))
    const live = await finishedRun(t.api, agent, {})
    expect(live.prompt_version).toBe('live-phone')
    expect(answers(live)).toEqual({ [tests.chat]: 'LIVE-CHAT speaking.', [tests.phone]: 'LIVE-PHONE speaking.' })
    const chatCandidate = await finishedRun(t.api, agent, { prompt_version: 'cand-chat' })
    expect(chatCandidate.prompt_version).toBe('cand-chat')
    expect(answers(chatCandidate)).toEqual({
      [tests.chat]: 'CANDIDATE-CHAT speaking.',
      [tests.phone]: 'LIVE-PHONE speaking.',
    })
    // By id as well as by label; the phone candidate goes through the simulated call.
    const prompts = (await t.api.get(`/agents/${agent}/prompts`)).body.data as any[]
    const candPhone = prompts.find((p) => p.label === 'cand-phone')
    const phoneCandidate = await finishedRun(t.api, agent, { prompt_version: candPhone.id })
    expect(answers(phoneCandidate)).toEqual({
      [tests.chat]: 'LIVE-CHAT speaking.',
      [tests.phone]: 'CANDIDATE-PHONE speaking.',
    })
    // Nothing was activated: the live versions stay active and the agent's prompts unchanged.
    const after = (await t.api.get(`/agents/${agent}/prompts`)).body.data as any[]
    expect(
      after
        .filter((p) => p.active)
        .map((p) => p.label)
        .sort(),
    ).toEqual(expect.arrayContaining(['live-chat', 'live-phone']))
    expect(after.find((p) => p.label === 'cand-chat').active).toBe(false)
    const a = (await t.api.get(`/agents/${agent}`)).body
    expect(a.chat_instructions).toBe('LIVE-CHAT: the chat prompt in use.')
    expect(a.instructions).toBe('LIVE-PHONE: the phone prompt in use.')
    expect(a.prompt_version).toBe('live-phone')
    expectError(
      await t.api.post(`/agents/${agent}/test-runs`, { prompt_version: 'no-such-label' }),
      400,
      'validation_error',
      'prompt_version',
    )
  })

  it("grades a judge rubric with the agent's chat engine", async () => {
    verifies('quality.runs.judge')
    const test = await t.api.post(`/agents/${agent}/tests`, {
      name: 'judged',
      turns: [
        {
          user: 'Who is speaking?',
          expect: [
            { type: 'judge', rubric: 'PASSME: the answer names who speaks.' },
            { type: 'judge', rubric: 'FAILME: the answer is about submarines.' },
          ],
        },
      ],
    })
    const run = await finishedRun(t.api, agent, { test_ids: [test.body.test_id] })
    expect(run).toMatchObject({ status: 'failed', failed: 1 })
    expect(run.results[0].turns[0].assertions).toEqual([
      { type: 'judge', passed: true, detail: 'the answer names the candidate.' },
      { type: 'judge', passed: false, detail: 'the answer is not about submarines.' },
    ])
    const judged = chat.requests.filter((r) => r.messages[0]?.content.startsWith('You grade one answer'))
    expect(judged).toHaveLength(2)
    expect(judged[0].user).toContain('Agent: LIVE-CHAT speaking.')
  })

  it('matches (a+)+$ against 100,000 characters in linear time while /v1/health stays fast', async () => {
    verifies('quality.runs.regex-linear')
    const test = await t.api.post(`/agents/${agent}/tests`, {
      name: 'a lot of a',
      turns: [
        {
          user: 'Please say many a',
          expect: [
            { type: 'regex', pattern: '(a+)+$' },
            { type: 'regex', pattern: '^(a|aa)+$' },
            // Linear but heavy (about 1,000 RE2 instructions per character): seconds of work, off the event loop.
            { type: 'regex', pattern: '\\w{1000}\\d' },
          ],
        },
      ],
    })
    expect(test.status, test.text).toBe(201)
    const probes: number[] = []
    let probing = true
    const health = createApi(server.base)
    const probe = (async () => {
      while (probing) {
        const at = performance.now()
        const r = await health.get('/health')
        probes.push(performance.now() - at)
        expect(r.status).toBe(200)
        await sleep(20)
      }
    })()
    const started = performance.now()
    const run = await finishedRun(t.api, agent, { test_ids: [test.body.test_id] })
    const took = performance.now() - started
    probing = false
    await probe
    const turn = run.results[0].turns[0]
    expect(turn.answer).toHaveLength(A_LOT)
    expect(turn.assertions.map((a: any) => a.passed)).toEqual([true, true, false])
    const sorted = [...probes].sort((x, y) => x - y)
    const max = sorted.at(-1)!
    console.log(
      `[regex-linear] run ${Math.round(took)} ms; ${probes.length} health probes: median ${Math.round(sorted[sorted.length >> 1])} ms, max ${Math.round(max)} ms; heavy pattern: ${turn.assertions[2].detail}`,
    )
    expect(probes.length).toBeGreaterThan(5)
    expect(max).toBeLessThan(1_000)
  })

  it('takes the turns of a run from the daily test_turns quota, refusing one that would pass it', async () => {
    verifies('quality.runs.quota')
    const limits = async () => (await t.api.get(`/accounts/${t.accountId}/limits`)).body.quotas.test_turns
    const before = await limits()
    expect(before.limit).toBe(40)
    const turns = Array.from({ length: 20 }, (_, i) => ({ user: `Question ${i}?` }))
    const big = await t.api.post(`/agents/${agent}/tests`, { name: 'twenty turns', turns })
    const left = before.limit - before.used
    expect(left).toBeGreaterThanOrEqual(20)
    expect(left).toBeLessThan(40)
    const refused = await t.api.post(`/agents/${agent}/test-runs`, { test_ids: [big.body.test_id], repeat: 2 })
    expectError(refused, 429, 'quota_exceeded')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await limits()).toEqual(before)
    const run = await t.api.post(`/agents/${agent}/test-runs`, { test_ids: [big.body.test_id] })
    expect(run.status, run.text).toBe(202)
    expect(await limits()).toEqual({ limit: 40, used: before.used + 20 })
    if (left - 20 < 20)
      expectError(
        await t.api.post(`/agents/${agent}/test-runs`, { test_ids: [big.body.test_id] }),
        429,
        'quota_exceeded',
      )
  })
})
