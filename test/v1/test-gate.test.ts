// The test gate over HTTP against the shared server (local engine): test_gate on the agent (validation, shown,
// no version bump), and a new prompt version from a patch, a restore or a build's instructions step activated
// only when every test of the agent passes on it. Below the rate: 409 tests_failed naming the run and the first
// failing assertion, the candidate listed and inactive, the agent and its answers unchanged; a fixing change then
// passes and is activated. The local engine answers from a fact its instructions state, which is what makes a
// prompt change change an answer offline.
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, expectError } from '../helpers/api'
import { buildAgent, waitForBuild } from '../helpers/build'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const OPEN = 'When do you open on weekdays?'
const AT_9 =
  'You are the assistant of Quokka Bakery.\nWe open at 9 am on weekdays.\nWe bake rye sourdough every morning.'
const AT_10 =
  'You are the assistant of Quokka Bakery.\nWe open at 10 am on weekdays.\nWe bake rye sourdough every morning.'
const AT_9_COFFEE = `${AT_9}\nWe also sell coffee.`

/** Five tests that pass on AT_9: the first one fails on AT_10. */
const TESTS = [
  { name: 'Opening hours', turns: [{ user: OPEN, expect: [{ type: 'contains', value: '9 am' }] }] },
  { name: 'Not at ten', turns: [{ user: OPEN, expect: [{ type: 'not_contains', value: 'noon' }] }] },
  { name: 'Bread', turns: [{ user: 'Do you bake rye sourdough?', expect: [{ type: 'contains', value: 'rye' }] }] },
  {
    name: 'Unknown stays unanswered',
    turns: [{ user: 'Do you repair submarines?', expect: [{ type: 'unanswered', value: true }] }],
  },
  { name: 'No tools', turns: [{ user: OPEN, expect: [{ type: 'tool_not_called', name: 'capture_lead' }] }] },
]

describe('the test gate (shared server)', () => {
  const base = inject('base')
  const master = createApi(base, inject('masterKey'))
  let t: Tenant
  let site: TestSite
  let agent: string
  let plain: string
  /** The 10 am candidate the gate refused on patch. */
  let tenCandidate: string

  const answer = async (agentId: string, text: string) => {
    const c = await t.api.post('/conversations', { agent_id: agentId })
    expect(c.status, c.text).toBe(201)
    const m = await t.api.post(`/conversations/${c.body.conversation_id}/messages`, { text })
    expect(m.status, m.text).toBe(200)
    return m.body.turn.text as string
  }
  const prompts = async (agentId: string) => (await t.api.get(`/agents/${agentId}/prompts`)).body.data as any[]
  const runs = async (agentId: string) => (await t.api.get(`/agents/${agentId}/test-runs`)).body.data as any[]

  beforeAll(async () => {
    site = await serveSite({
      '/': {
        body: html('Quokka Bakery', '<h1>Quokka Bakery</h1><p>Quokka Bakery is a family bakery in Fremantle.</p>'),
      },
    })
    t = await createTenant(master)
    ;[agent, plain] = await Promise.all([
      buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' }),
      buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' }),
    ])
    const p = await t.api.patch(`/agents/${agent}`, { chat_instructions: AT_9 })
    expect(p.status, p.text).toBe(200)
    for (const test of TESTS) {
      const c = await t.api.post(`/agents/${agent}/tests`, test)
      expect(c.status, c.text).toBe(201)
    }
  }, 120_000)

  it('the local engine answers from a fact its instructions state, and a prompt change changes it', async () => {
    verifies('quality.gate.local-instructions')
    expect(await answer(agent, OPEN)).toBe('We open at 9 am on weekdays.')
    // A direction to the model is not an answer, nor is a fact that does not hold the question's words.
    expect(await answer(agent, 'Are you a helpful assistant?')).toMatch(/don't have that information/)
    const p = await t.api.patch(`/agents/${plain}`, { chat_instructions: AT_10 })
    expect(p.status, p.text).toBe(200)
    expect(await answer(plain, OPEN)).toBe('We open at 10 am on weekdays.')
  })

  it('test_gate is validated, shown on the agent and bumps no version', async () => {
    verifies('quality.gate.setting')
    for (const bad of [{ min_pass_rate: 1.5 }, { min_pass_rate: -0.1 }, { min_pass_rate: 'all' }, {}])
      expectError(
        await t.api.patch(`/agents/${plain}`, { test_gate: bad }),
        400,
        'validation_error',
        'test_gate.min_pass_rate',
      )
    expectError(
      await t.api.patch(`/agents/${plain}`, { test_gate: { min_pass_rate: 1, x: 1 } }),
      400,
      'unsupported_field',
    )
    const before = (await t.api.get(`/agents/${agent}`)).body
    expect(before.test_gate).toBeNull()
    const p = await t.api.patch(`/agents/${agent}`, { test_gate: { min_pass_rate: 1 } })
    expect(p.status, p.text).toBe(200)
    expect(p.body).toMatchObject({ changed: ['test_gate'], agent_version: before.agent_version, deployed: [] })
    expect((await t.api.get(`/agents/${agent}`)).body.test_gate).toEqual({ min_pass_rate: 1 })
    // No prompt change: nothing to test, no run.
    expect(await runs(agent)).toEqual([])
  })

  it('no gate: a prompt patch runs nothing; a gate without tests lets the change through', async () => {
    verifies('quality.gate.no-gate')
    const p = await t.api.patch(`/agents/${plain}`, { chat_instructions: AT_9 })
    expect(p.status, p.text).toBe(200)
    expect(p.body.deployed).toMatchObject([{ type: 'chat', active: true }])
    expect(await runs(plain)).toEqual([])
    const g = await t.api.patch(`/agents/${plain}`, { test_gate: { min_pass_rate: 1 }, chat_instructions: AT_10 })
    expect(g.status, g.text).toBe(200)
    expect(g.body.deployed).toMatchObject([{ type: 'chat', active: true }])
    expect(await runs(plain)).toEqual([])
    expect(await answer(plain, OPEN)).toBe('We open at 10 am on weekdays.')
  })

  it('on patch: refused below the rate with the run and failing assertion named, nothing written; the fix passes', async () => {
    verifies('quality.gate.patch')
    const before = (await t.api.get(`/agents/${agent}`)).body
    const r = await t.api.patch(`/agents/${agent}`, { chat_instructions: AT_10, name: 'Renamed' })
    expectError(r, 409, 'tests_failed')
    const run = r.body.error.message.match(/run_\d+/)?.[0]
    expect(r.body.error.message).toContain('pass rate 0.8, below test_gate.min_pass_rate 1')
    expect(r.body.error.message).toContain(`test "Opening hours"`)
    expect(r.body.error.message).toContain('turn 1, contains: "9 am" is not in the answer.')
    const failedRun = (await t.api.get(`/test-runs/${run}`)).body
    expect(failedRun).toMatchObject({ status: 'failed', passed: 4, failed: 1, pass_rate: 0.8 })
    // The candidate is listed, inactive, under the label a deploy would have had; the active version stays.
    const listed = await prompts(agent)
    const candidate = listed.find((p) => p.label === failedRun.prompt_version)
    expect(candidate).toMatchObject({ type: 'chat', active: false })
    expect((await t.api.get(`/agents/${agent}/prompts/${candidate.id}`)).body.body).toBe(AT_10)
    tenCandidate = candidate.id
    expect(listed.find((p) => p.type === 'chat' && p.active).label).toBe(before.prompt_version)
    // Nothing of the request was written: the prompt, the other field, the versions.
    const after = (await t.api.get(`/agents/${agent}`)).body
    expect(after).toMatchObject({
      chat_instructions: AT_9,
      name: before.name,
      agent_version: before.agent_version,
      prompt_version: before.prompt_version,
    })
    expect(await answer(agent, OPEN)).toBe('We open at 9 am on weekdays.')

    const fixed = await t.api.patch(`/agents/${agent}`, { chat_instructions: AT_9_COFFEE, name: 'Renamed' })
    expect(fixed.status, fixed.text).toBe(200)
    expect(fixed.body.changed.sort()).toEqual(['chat_instructions', 'name'])
    expect(fixed.body.deployed).toMatchObject([{ type: 'chat', active: true }])
    const passed = (await runs(agent))[0]
    expect(passed).toMatchObject({ status: 'passed', passed: 5, failed: 0, prompt_version: fixed.body.prompt_version })
    expect((await t.api.get(`/agents/${agent}`)).body).toMatchObject({
      chat_instructions: AT_9_COFFEE,
      name: 'Renamed',
    })
    expect(await answer(agent, 'Do you sell coffee?')).toBe('We also sell coffee.')
  }, 120_000)

  it('on restore: a failing version restored is refused and stays inactive; a passing one is activated', async () => {
    verifies('quality.gate.restore')
    const before = (await t.api.get(`/agents/${agent}`)).body
    const r = await t.api.post(`/agents/${agent}/prompts/${tenCandidate}/restore`, { label: 'back-to-ten' })
    expectError(r, 409, 'tests_failed')
    expect(r.body.error.message).toMatch(/Test run run_\d+ passed 4 of 5/)
    expect(r.body.error.message).toContain('turn 1, contains')
    const candidate = (await prompts(agent)).find((p) => p.label === 'back-to-ten')
    expect(candidate).toMatchObject({ active: false })
    expect((await t.api.get(`/agents/${agent}`)).body).toMatchObject({
      agent_version: before.agent_version,
      chat_instructions: AT_9_COFFEE,
    })
    // The first good version, restored, passes.
    const good = (
      await Promise.all(
        (
          await prompts(agent)
        )
          .filter((p) => p.type === 'chat')
          .map(async (p) => (await t.api.get(`/agents/${agent}/prompts/${p.id}`)).body),
      )
    ).find((p) => p.body === AT_9)
    const ok = await t.api.post(`/agents/${agent}/prompts/${good.id}/restore`, { label: 'back-to-nine' })
    expect(ok.status, ok.text).toBe(201)
    expect(ok.body).toMatchObject({ prompt_version: 'back-to-nine', version: { active: true, body: AT_9 } })
    expect((await t.api.get(`/agents/${agent}`)).body.chat_instructions).toBe(AT_9)
  }, 120_000)

  it("on a build's instructions step: the step fails with the gate's error; after a fix the rebuild activates", async () => {
    verifies('quality.gate.build')
    const before = (await t.api.get(`/agents/${agent}`)).body
    // The template instructions do not say when the bakery opens: "Opening hours" fails.
    const b = await t.api.post(`/agents/${agent}/build`, { from_step: 'instructions' })
    expect(b.status, b.text).toBe(202)
    const build = await waitForBuild(t.api, agent, 90_000)
    expect(build.status).toBe('failed')
    const step = build.steps.find((s: any) => s.name === 'instructions')
    expect(step.status).toBe('failed')
    expect(step.error).toMatch(/^Test run run_\d+ passed \d of 5/)
    expect(step.error).toContain('test "Opening hours"')
    const candidates = (await prompts(agent)).filter((p) => p.label.startsWith(`build-${b.body.build_number}-`))
    expect(candidates.map((p) => [p.type, p.active]).sort()).toEqual([
      ['chat', false],
      ['phone', false],
      ['voice_chat', false],
    ])
    expect((await t.api.get(`/agents/${agent}`)).body).toMatchObject({
      agent_version: before.agent_version,
      chat_instructions: AT_9,
    })
    expect(await answer(agent, OPEN)).toBe('We open at 9 am on weekdays.')

    // The fix: the business states its facts as rules, which every prompt carries; the rebuild passes.
    const rule = await t.api.patch(`/agents/${agent}`, {
      refinement_rules: ['We open at 9 am on weekdays.', 'We bake rye sourdough every morning.'],
    })
    expect(rule.status, rule.text).toBe(200)
    const again = await t.api.post(`/agents/${agent}/build`, { from_step: 'instructions' })
    expect(again.status, again.text).toBe(202)
    const rebuilt = await waitForBuild(t.api, agent, 90_000)
    expect(rebuilt.status, JSON.stringify(rebuilt.steps)).toBe('succeeded')
    const active = (await prompts(agent)).filter((p) => p.active)
    expect(active.map((p) => p.label).sort()).toEqual(
      ['chat', 'phone', 'voice_chat'].map((x) => `build-${again.body.build_number}-${x}`),
    )
    expect((await runs(agent))[0]).toMatchObject({ status: 'passed', passed: 5 })
    expect(await answer(agent, OPEN)).toContain('9 am')
  }, 200_000)
})
