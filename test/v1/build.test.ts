// Building agents from a website served by the test itself: the steps run to success, the summary
// carries a fact from a page two links deep, re-runs, URL safety, quotas and tenant isolation.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, err } from '../helpers/api'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'
import { waitForBuild } from '../helpers/build'

const base = inject('base')
const master = createApi(base, inject('masterKey'))
let t: Tenant
let site: TestSite
let voiceId: string

const PAGES = {
  '/': {
    body: html(
      'Zephyr Bakery | Home',
      '<h1>Zephyr Bakery</h1><p>Fresh bread every morning in Portland.</p><a href="/about">About us</a> <a href="/menu">Our menu</a> <a href="/private/x">Staff</a> <a href="https://elsewhere.example/">Partner</a>',
    ),
  },
  '/about': {
    body: html(
      'About | Zephyr Bakery',
      '<p>Zephyr Bakery is a family bakery founded in Portland.</p><a href="/about/team">Meet the team</a>',
    ),
  },
  '/about/team': {
    body: html(
      'Team | Zephyr Bakery',
      '<p>Our head baker Zelda Quixote has baked sourdough since 1987.</p><p>She trained in Lyon.</p>',
    ),
  },
  '/menu': {
    body: html(
      'Menu | Zephyr Bakery',
      '<p>A butter croissant costs $3.50.</p><p>Call us at +1 415 555 0100 to order cakes.</p><p>We are open Monday to Saturday, 7am to 3pm.</p>',
    ),
  },
  '/private/x': { body: html('Private', '<p>Secret staff roster.</p>') },
  '/robots.txt': { type: 'text/plain', body: 'User-agent: *\nDisallow: /private\n' },
  '/go-private': { location: 'http://10.0.0.7/' },
  '/go-metadata': { location: 'http://169.254.169.254/latest/meta-data/' },
}

beforeAll(async () => {
  site = await serveSite(PAGES)
  t = await createTenant(master)
  const voices = await t.api.get('/voices')
  voiceId = voices.body.data[0].voice_id
})
afterAll(async () => {
  await site?.close()
})

describe('build from a website', () => {
  let agentId: string

  it('answers 202 with the agent and a queued build, then runs crawl, summary, greeting and instructions to success', async () => {
    verifies('agents.build', 'kb.crawler')
    const before = (await t.api.get(`/accounts/${t.accountId}/limits`)).body.quotas
    const r = await t.api.post(`/accounts/${t.accountId}/agents/build`, {
      website_url: `${site.origin}/`,
      voice_id: voiceId,
      language: 'en',
    })
    expect(r.status).toBe(202)
    expect(r.body.agent_id).toMatch(/^agt_\d+$/)
    expect(r.body.build).toMatchObject({
      agent_id: r.body.agent_id,
      status: 'queued',
      build_number: 1,
      from_step: 'crawl',
    })
    expect(r.body.build.steps.map((s: any) => [s.name, s.status])).toEqual([
      ['crawl', 'queued'],
      ['summary', 'queued'],
      ['greeting', 'queued'],
      ['instructions', 'queued'],
    ])
    agentId = r.body.agent_id
    const build = await waitForBuild(t.api, agentId)
    expect(build.status, JSON.stringify(build.steps)).toBe('succeeded')
    for (const step of build.steps) {
      expect(step.status).toBe('succeeded')
      expect(Date.parse(step.finished_at)).toBeGreaterThanOrEqual(Date.parse(step.started_at))
      expect(step.duration_ms).toBeGreaterThanOrEqual(0)
      expect(step.error).toBeNull()
    }
    const after = (await t.api.get(`/accounts/${t.accountId}/limits`)).body.quotas
    expect(after.agent_creates.used).toBe(before.agent_creates.used + 1)
    expect(after.builds.used).toBe(before.builds.used + 1)
    // robots.txt is honoured and other hosts are never fetched.
    expect(site.hits).not.toContain('/private/x')
  })

  it('the summary mentions a fact from a page two links deep; greeting and prompts come from the site', async () => {
    verifies('agents.build')
    const s = await t.api.get(`/agents/${agentId}/kb/summary`)
    expect(s.status).toBe(200)
    expect(s.body.text).toContain('Zelda Quixote')
    expect(s.body.text).toContain('3.50')
    expect(s.body.version).toBe(1)
    const agent = (await t.api.get(`/agents/${agentId}`)).body
    expect(agent.agent_version).toMatch(/-v1$/)
    expect(agent.prompt_version).toBe('build-1-voice_chat')
    expect(agent.business_name).toBe('Zephyr Bakery')
    expect(agent.greeting_initial).toContain('Zephyr Bakery')
    for (const f of ['instructions', 'chat_instructions', 'voice_chat_instructions'])
      expect(agent[f].length).toBeGreaterThan(50)
    expect(agent.chat_instructions).not.toBe(agent.instructions)
    const prompts = await t.api.get(`/agents/${agentId}/prompts`)
    expect(prompts.body.data.map((p: any) => p.label).sort()).toEqual([
      'build-1-chat',
      'build-1-phone',
      'build-1-voice_chat',
    ])
    const list = await t.api.get(`/accounts/${t.accountId}/agents`)
    const entry = list.body.agents.find((a: any) => a.agent_id === agentId)
    expect(entry.knowledge_bases.find((k: any) => k.kind === 'pages')).toMatchObject({
      count: 4,
      summary_status: 'ready',
      summary_stale: false,
    })
  })

  it('re-runs from a step: earlier steps skipped, 409 build_in_progress while it runs, new prompt versions', async () => {
    verifies('agents.build', 'agents.prompts')
    const r = await t.api.post(`/agents/${agentId}/build`, { from_step: 'instructions' })
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ build_number: 2, from_step: 'instructions', status: 'queued' })
    const again = await t.api.post(`/agents/${agentId}/build`, { from_step: 'crawl' })
    if (again.status !== 202) expect(err(again).code).toBe('build_in_progress')
    const build = await waitForBuild(t.api, agentId)
    expect(build.status).toBe('succeeded')
    if (build.build_number === 2)
      expect(build.steps.map((s: any) => s.status)).toEqual(['skipped', 'skipped', 'skipped', 'succeeded'])
    const labels = (await t.api.get(`/agents/${agentId}/prompts`)).body.data.map((p: any) => p.label)
    expect(labels).toEqual(expect.arrayContaining(['build-2-phone', 'build-2-chat', 'build-2-voice_chat']))
    expect(err(await t.api.post(`/agents/${agentId}/build`, { from_step: 'nap' }))).toMatchObject({
      code: 'validation_error',
      field: 'from_step',
    })
  })

  it('a second build while the first runs is 409 build_in_progress', async () => {
    verifies('agents.build')
    const slow = await serveSite({
      '/': { body: html('Slow Shop', '<p>Slow Shop sells tea.</p><a href="/more">More</a>') },
      '/more': { delayMs: 2500, body: html('More', '<p>Green tea costs $4.</p>') },
    })
    try {
      const r = await t.api.post(`/accounts/${t.accountId}/agents/build`, {
        website_url: `${slow.origin}/`,
        voice_id: voiceId,
      })
      expect(r.status).toBe(202)
      await new Promise((res) => setTimeout(res, 300))
      expect((await t.api.get(`/accounts/${t.accountId}/limits`)).body.quotas.builds_in_progress).toBe(1)
      const clash = await t.api.post(`/agents/${r.body.agent_id}/build`, {})
      expect(clash.status).toBe(409)
      expect(err(clash).code).toBe('build_in_progress')
      expect((await waitForBuild(t.api, r.body.agent_id)).status).toBe('succeeded')
    } finally {
      await slow.close()
    }
  })

  it('a site that fails shows the failed step and its error', async () => {
    verifies('agents.build')
    const broken = await serveSite({ '/': { status: 500, body: 'down' } })
    try {
      const r = await t.api.post(`/accounts/${t.accountId}/agents/build`, {
        website_url: `${broken.origin}/`,
        voice_id: voiceId,
      })
      expect(r.status).toBe(202)
      const build = await waitForBuild(t.api, r.body.agent_id)
      expect(build.status).toBe('failed')
      expect(build.steps[0]).toMatchObject({ name: 'crawl', status: 'failed' })
      expect(build.steps[0].error).toMatch(/500|http_status/)
      expect(build.steps.slice(1).map((s: any) => s.status)).toEqual(['queued', 'queued', 'queued'])
    } finally {
      await broken.close()
    }
  })
})

describe('URL safety and validation', () => {
  it('refuses private, loopback, link-local, metadata and non-http URLs with 400 invalid_url, creating nothing', async () => {
    verifies('kb.url-safety')
    const before = (await t.api.get(`/accounts/${t.accountId}/agents`)).body.agents.length
    const quotas = (await t.api.get(`/accounts/${t.accountId}/limits`)).body.quotas
    for (const url of [
      'http://10.0.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/',
      'http://localhost/',
      `http://localhost:${new URL(site.origin).port}/`,
      `${site.origin}/go-private`,
      `${site.origin}/go-metadata`,
      'ftp://example.com/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'not a url',
    ]) {
      const r = await t.api.post(`/accounts/${t.accountId}/agents/build`, { website_url: url, voice_id: voiceId })
      expect(r.status, url).toBe(400)
      expect(err(r), url).toMatchObject({ code: 'invalid_url', field: 'website_url' })
    }
    expect((await t.api.get(`/accounts/${t.accountId}/agents`)).body.agents.length).toBe(before)
    expect((await t.api.get(`/accounts/${t.accountId}/limits`)).body.quotas.agent_creates.used).toBe(
      quotas.agent_creates.used,
    )
  })

  it('validates the body: voice, fields, scope', async () => {
    verifies('agents.build', 'errors.unsupported_field')
    expect(
      err(
        await t.api.post(`/accounts/${t.accountId}/agents/build`, {
          website_url: `${site.origin}/`,
          voice_id: 'no-such-voice',
        }),
      ),
    ).toMatchObject({ code: 'validation_error', field: 'voice_id' })
    expect(
      err(await t.api.post(`/accounts/${t.accountId}/agents/build`, { website_url: `${site.origin}/` })),
    ).toMatchObject({ code: 'validation_error', field: 'voice_id' })
    expect(
      err(
        await t.api.post(`/accounts/${t.accountId}/agents/build`, {
          website_url: `${site.origin}/`,
          voice_id: voiceId,
          colour: 'red',
        }),
      ),
    ).toMatchObject({ code: 'unsupported_field', field: 'colour' })
    const readOnly = await master.post(`/users/${t.userId}/credentials`, { scopes: ['agents:read'] })
    expect(
      err(
        await createApi(base, readOnly.body.secret).post(`/accounts/${t.accountId}/agents/build`, {
          website_url: `${site.origin}/`,
          voice_id: voiceId,
        }),
      ).code,
    ).toBe('insufficient_scope')
  })
})

describe('tenancy and quotas', () => {
  it("another tenant's agent build is 404 agent_not_found", async () => {
    verifies('tenancy.isolation')
    const other = await createTenant(master)
    const mine = (await t.api.get(`/accounts/${t.accountId}/agents`)).body.agents[0].agent_id
    expect(err(await other.api.get(`/agents/${mine}/build`)).code).toBe('agent_not_found')
    expect(err(await other.api.post(`/agents/${mine}/build`, {})).code).toBe('agent_not_found')
    expect(
      (
        await other.api.post(`/accounts/${t.accountId}/agents/build`, {
          website_url: `${site.origin}/`,
          voice_id: voiceId,
        })
      ).status,
    ).toBe(404)
  })

  it('agent_creates is a daily quota: past it, 429 quota_exceeded with Retry-After', async () => {
    verifies('accounts.limits')
    const q = await createTenant(master)
    await master.patch(`/users/${q.userId}`, { limits: { max_agent_creates_per_day: 1 } })
    expect(
      (await q.api.post(`/accounts/${q.accountId}/agents/build`, { website_url: `${site.origin}/`, voice_id: voiceId }))
        .status,
    ).toBe(202)
    const r = await q.api.post(`/accounts/${q.accountId}/agents/build`, {
      website_url: `${site.origin}/`,
      voice_id: voiceId,
    })
    expect(r.status).toBe(429)
    expect(err(r).code).toBe('quota_exceeded')
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await q.api.get(`/accounts/${q.accountId}/agents`)).body.agents).toHaveLength(1)
  })

  it('the master key builds with X-Svc-Account', async () => {
    verifies('auth.master-data-route')
    const noHeader = await master.post(`/accounts/${t.accountId}/agents/build`, {
      website_url: `${site.origin}/`,
      voice_id: voiceId,
    })
    expect(err(noHeader).code).toBe('forbidden_account')
    const ok = await master.post(
      `/accounts/${t.accountId}/agents/build`,
      { website_url: `${site.origin}/`, voice_id: voiceId },
      { headers: { 'x-svc-account': t.accountId } },
    )
    expect(ok.status).toBe(202)
    expect((await waitForBuild(t.api, ok.body.agent_id)).status).toBe('succeeded')
  })
})
