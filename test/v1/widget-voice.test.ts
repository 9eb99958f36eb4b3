// Widget and voice over HTTP on a server of its own: the public token's lifecycle (minted on a
// non-empty allowed_domains, shown only by GET widget and regenerate-token, which needs agents:admin), appearance, and
// the voice configuration (bumps agent_version, mirrored onto the agent).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { err, type Api } from '../helpers/api'
import { startSeededServer } from '../helpers/agents'
import type { TestServer } from '../helpers/server'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const env = { SVC_RATE_LIMITS: 'read=100000,write=100000' }
let server: TestServer
let t: Tenant
let api: Api
let readOnly: Api
let writer: Api
let master: Api
let a1: string, a2: string, b1: string

beforeAll(async () => {
  const seeded = await startSeededServer({
    env,
    prepare: async (m) => {
      const t = await createTenant(m)
      const other = await createTenant(m)
      const ro = await m.post(`/users/${t.userId}/credentials`, { scopes: ['agents:read'] })
      const w = await m.post(`/users/${t.userId}/credentials`, { scopes: ['agents:read', 'agents:write'] })
      return { t, other, readOnlyKey: ro.body.secret as string, writerKey: w.body.secret as string }
    },
    agents: ({ t, other }) => [
      { accountId: t.accountId },
      { accountId: t.accountId, voiceId: 'echo', language: 'fr-FR' },
      { accountId: other.accountId },
    ],
  })
  server = seeded.server
  t = seeded.prepared.t
  ;[a1, a2, b1] = seeded.agentIds
  api = seeded.as(t.key)
  readOnly = seeded.as(seeded.prepared.readOnlyKey)
  writer = seeded.as(seeded.prepared.writerKey)
  master = seeded.master
})
afterAll(async () => {
  await server?.stop('SIGKILL')
})

const versionN = (v: string) => Number(/-v(\d+)$/.exec(v)![1])
const version = async (agt: string) => (await api.get(`/agents/${agt}`)).body.agent_version as string

describe('widget', () => {
  it('starts without a token: public_token and embed_snippet are null', async () => {
    verifies('agents.widget')
    const r = await api.get(`/agents/${a1}/widget`)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ agent_id: a1, public_token: null, embed_snippet: null, allowed_domains: [] })
    expect(r.body.appearance).toEqual({
      theme: null,
      primary_color: null,
      position: null,
      title: null,
      launcher_text: null,
      avatar_url: null,
      welcome_message: null,
    })
  })

  it('appearance merges key by key without a token or a new agent_version', async () => {
    verifies('agents.widget')
    const before = await version(a1)
    const r = await api.patch(`/agents/${a1}/widget`, { appearance: { theme: 'dark', primary_color: '#112233' } })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      agent_id: a1,
      has_public_token: false,
      appearance: { theme: 'dark', primary_color: '#112233', title: null },
    })
    const r2 = await api.patch(`/agents/${a1}/widget`, { appearance: { title: 'Help', primary_color: null } })
    expect(r2.body.appearance).toMatchObject({ theme: 'dark', primary_color: null, title: 'Help' })
    expect(await version(a1)).toBe(before)
  })

  it('a non-empty allowed_domains mints the token; only GET widget shows it, never PATCH; no agent_version bump', async () => {
    verifies('agents.widget', 'contract.smaller-points')
    const before = await version(a1)
    const r = await api.patch(`/agents/${a1}/widget`, { allowed_domains: ['Example.com', '*.example.org'] })
    expect(r.status).toBe(200)
    // PATCH answers the settings with has_public_token, like the agent record's widget block.
    expect(Object.keys(r.body).sort()).toEqual([
      'agent_id',
      'allowed_domains',
      'appearance',
      'has_public_token',
      'meta',
    ])
    expect(r.body).toMatchObject({ has_public_token: true, allowed_domains: ['example.com', '*.example.org'] })
    const w = await api.get(`/agents/${a1}/widget`)
    const token = w.body.public_token as string
    expect(token).toMatch(/^wpk_[A-Za-z0-9_-]{32}$/)
    expect(r.text).not.toContain(token)
    expect(w.body.embed_snippet).toContain(`data-token="${token}"`)
    expect(w.body.embed_snippet).toMatch(/^<script src="http/)
    const agent = await api.get(`/agents/${a1}`)
    expect(agent.body.widget).toMatchObject({
      has_public_token: true,
      allowed_domains: ['example.com', '*.example.org'],
    })
    expect(agent.text).not.toContain(token)
    expect((await api.get(`/accounts/${t.accountId}/agents`)).text).not.toContain(token)
    expect(agent.body.agent_version).toBe(before)
    // Later patches keep the same token (and do not show it).
    const again = await api.patch(`/agents/${a1}/widget`, { allowed_domains: ['example.com'] })
    expect(again.body).toMatchObject({ has_public_token: true })
    expect(again.text).not.toContain(token)
    expect((await api.get(`/agents/${a1}/widget`)).body.public_token).toBe(token)
  })

  it('regenerate-token replaces the token at once and needs agents:admin', async () => {
    verifies('agents.widget', 'contract.smaller-points')
    const old = (await api.get(`/agents/${a1}/widget`)).body.public_token
    const before = await version(a1)
    // agents:write may change the settings, not the token.
    const refused = await writer.post(`/agents/${a1}/widget/regenerate-token`)
    expect(err(refused)).toMatchObject({ code: 'insufficient_scope' })
    expect(err(refused).message).toContain('agents:admin')
    expect((await writer.patch(`/agents/${a1}/widget`, { appearance: { theme: 'light' } })).status).toBe(200)
    expect((await api.get(`/agents/${a1}/widget`)).body.public_token).toBe(old)
    const r = await api.post(`/agents/${a1}/widget/regenerate-token`)
    expect(r.status).toBe(200)
    expect(r.body.public_token).toMatch(/^wpk_/)
    expect(r.body.public_token).not.toBe(old)
    expect(r.body.embed_snippet).toContain(r.body.public_token)
    const now = (await api.get(`/agents/${a1}/widget`)).body
    expect(now.public_token).toBe(r.body.public_token)
    expect(now.embed_snippet).not.toContain(old)
    expect(await version(a1)).toBe(before)
    // An agent without a token gets its first one from regenerate-token.
    const fresh = await api.post(`/agents/${a2}/widget/regenerate-token`)
    expect(fresh.body.public_token).toMatch(/^wpk_/)
  })

  it("validates the patch; scopes; another account's agent is 404", async () => {
    verifies(
      'agents.widget',
      'errors.empty_update',
      'errors.unsupported_field',
      'errors.validation_error',
      'tenancy.agents',
    )
    const p = (b: unknown) => api.patch(`/agents/${a1}/widget`, b)
    expect(err(await p({})).code).toBe('empty_update')
    expect(err(await p({ public_token: 'x' }))).toMatchObject({ code: 'unsupported_field', field: 'public_token' })
    expect(err(await p({ appearance: { font: 'x' } }))).toMatchObject({
      code: 'unsupported_field',
      field: 'appearance.font',
    })
    expect(err(await p({ allowed_domains: ['not a domain'] }))).toMatchObject({
      code: 'validation_error',
      field: 'allowed_domains.0',
    })
    expect(err(await p({ allowed_domains: 'example.com' }))).toMatchObject({
      code: 'validation_error',
      field: 'allowed_domains',
    })
    expect(err(await p({ appearance: { theme: 'neon' } }))).toMatchObject({
      code: 'validation_error',
      field: 'appearance.theme',
    })
    expect(err(await api.post(`/agents/${a1}/widget/regenerate-token`, { force: true }))).toMatchObject({
      code: 'unsupported_field',
      field: 'force',
    })
    expect(err(await readOnly.patch(`/agents/${a1}/widget`, { appearance: { theme: 'light' } })).code).toBe(
      'insufficient_scope',
    )
    expect(err(await readOnly.post(`/agents/${a1}/widget/regenerate-token`)).code).toBe('insufficient_scope')
    expect((await readOnly.get(`/agents/${a1}/widget`)).status).toBe(200)
    expect(err(await api.get(`/agents/${b1}/widget`)).code).toBe('agent_not_found')
    expect(err(await api.post(`/agents/${b1}/widget/regenerate-token`)).code).toBe('agent_not_found')
    expect(err(await master.get(`/agents/${a1}/widget`)).code).toBe('forbidden_account')
    expect((await master.get(`/agents/${a1}/widget`, { headers: { 'x-svc-account': t.accountId } })).status).toBe(200)
  })
})

describe('voice', () => {
  it('GET voice answers the Voice configuration from the agent', async () => {
    verifies('agents.voice')
    const r = await api.get(`/agents/${a2}/voice`)
    expect(r.status).toBe(200)
    expect(Object.keys(r.body).sort()).toEqual([
      'barge_in',
      'end_of_speech_ms',
      'meta',
      'model',
      'provider',
      'speaking_rate',
      'style',
      'voice_id',
      'voice_locale',
    ])
    expect(r.body).toMatchObject({
      provider: 'openai',
      voice_id: 'echo',
      voice_locale: 'fr-FR',
      speaking_rate: 1,
      barge_in: true,
      end_of_speech_ms: 500,
      style: null,
    })
  })

  it('PATCH voice bumps agent_version once and mirrors every field onto the agent', async () => {
    verifies('agents.voice')
    const before = await version(a2)
    const r = await api.patch(`/agents/${a2}/voice`, {
      voice_id: 'nova',
      voice_locale: 'en-US',
      speaking_rate: 1.25,
      barge_in: false,
      end_of_speech_ms: 350,
      style: 'calm',
    })
    expect(r.status).toBe(200)
    expect(Object.keys(r.body).sort()).toEqual(['agent_version', 'meta', 'voice'])
    expect(versionN(r.body.agent_version)).toBe(versionN(before) + 1)
    expect(r.body.voice).toMatchObject({
      provider: 'openai',
      voice_id: 'nova',
      voice_locale: 'en-US',
      speaking_rate: 1.25,
      barge_in: false,
      end_of_speech_ms: 350,
      style: 'calm',
    })
    const agent = (await api.get(`/agents/${a2}`)).body
    expect(agent).toMatchObject({
      voice_id: 'nova',
      voice_locale: 'en-US',
      speaking_rate: 1.25,
      barge_in: false,
      end_of_speech_ms: 350,
      voice_style: 'calm',
      agent_version: r.body.agent_version,
    })
    expect(agent.voice).toEqual(r.body.voice)
    // The same values again change nothing and bump nothing.
    expect((await api.patch(`/agents/${a2}/voice`, { speaking_rate: 1.25 })).body.agent_version).toBe(
      r.body.agent_version,
    )
    // A style change on the voice route is a voice change: it bumps.
    const styled = await api.patch(`/agents/${a2}/voice`, { style: 'bright' })
    expect(versionN(styled.body.agent_version)).toBe(versionN(r.body.agent_version) + 1)
    const markers = (await api.get(`/agent-versions?agent_id=${a2}`)).body.data
    expect(markers[0]).toMatchObject({
      agent_version: styled.body.agent_version,
      reason: 'voice',
      changed: ['voice_style'],
    })
    // null restores the default end of speech, and is a voice change too.
    const reset = await api.patch(`/agents/${a2}/voice`, { end_of_speech_ms: null })
    expect(versionN(reset.body.agent_version)).toBe(versionN(styled.body.agent_version) + 1)
    expect(reset.body.voice.end_of_speech_ms).toBe(500)
  })

  it('on PATCH /agents voice fields bump but voice_style does not; both show in GET voice', async () => {
    verifies('agents.voice', 'agents.patch-whitelist')
    const before = await version(a1)
    const s = await api.patch(`/agents/${a1}`, { voice_style: 'soft' })
    expect(s.body).toMatchObject({ agent_version: before, changed: ['voice_style'] })
    const v = await api.patch(`/agents/${a1}`, { speaking_rate: 0.8, barge_in: false })
    expect(versionN(v.body.agent_version)).toBe(versionN(before) + 1)
    expect((await api.get(`/agents/${a1}/voice`)).body).toMatchObject({
      style: 'soft',
      speaking_rate: 0.8,
      barge_in: false,
    })
  })

  it("validates the voice patch; scopes; another account's agent is 404", async () => {
    verifies('agents.voice', 'errors.empty_update', 'errors.unsupported_field', 'errors.validation_error')
    const p = (b: unknown) => api.patch(`/agents/${a2}/voice`, b)
    expect(err(await p({})).code).toBe('empty_update')
    expect(err(await p({ provider: 'x' }))).toMatchObject({ code: 'unsupported_field', field: 'provider' })
    expect(err(await p({ voice_style: 'x' }))).toMatchObject({ code: 'unsupported_field', field: 'voice_style' })
    expect(err(await p({ speaking_rate: 3 }))).toMatchObject({ code: 'validation_error', field: 'speaking_rate' })
    expect(err(await p({ barge_in: 'no' }))).toMatchObject({ code: 'validation_error', field: 'barge_in' })
    for (const bad of [199, 2001, 450.5, '500'])
      expect(err(await p({ end_of_speech_ms: bad }))).toMatchObject({
        code: 'validation_error',
        field: 'end_of_speech_ms',
      })
    expect(err(await p({ voice_locale: 'English' }))).toMatchObject({ code: 'validation_error', field: 'voice_locale' })
    expect(err(await readOnly.patch(`/agents/${a2}/voice`, { speaking_rate: 1 })).code).toBe('insufficient_scope')
    expect((await readOnly.get(`/agents/${a2}/voice`)).status).toBe(200)
    expect(err(await api.get(`/agents/${b1}/voice`)).code).toBe('agent_not_found')
    expect(err(await api.patch(`/agents/${b1}/voice`, { speaking_rate: 1 })).code).toBe('agent_not_found')
    expect(err(await api.get('/agents/agt_/voice')).code).toBe('invalid_id')
  })
})
