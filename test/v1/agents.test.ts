// Agents over HTTP on a server of its own: read (full record, nested blocks, model), the account list,
// the 46-field patch whitelist and its version rules, tenancy, aliases and the master key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { kbDocuments } from '~/db/schema'
import { nextDocumentId } from '~/domain/agents/create'
import { BEHAVIOURAL_FIELDS, NON_BEHAVIOURAL_FIELDS } from '~/domain/agents/schemas'
import { createApi, err, type Api } from '../helpers/api'
import { seedAgents } from '../helpers/agents'
import { withDatabase } from '../helpers/db'
import { startServer, type TestServer } from '../helpers/server'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const env = { SVC_RATE_LIMITS: 'read=100000,write=100000' }
let server: TestServer
let t: Tenant
let other: Tenant
let api: Api
let otherApi: Api
let readOnly: Api
let master: Api
let a1: string, a2: string, b1: string

beforeAll(async () => {
  server = await startServer({ env })
  const m = createApi(server.base, server.masterKey)
  t = await createTenant(m)
  other = await createTenant(m)
  const ro = await m.post(`/users/${t.userId}/credentials`, { scopes: ['agents:read'] })
  await server.stop('SIGTERM')
  ;[a1, a2, b1] = await seedAgents(server.dataDir, [
    { accountId: t.accountId, name: 'First' },
    { accountId: t.accountId, name: 'Second', agentType: 'phone' },
    { accountId: other.accountId, name: 'Theirs' },
  ])
  await withDatabase(server.dataDir, (db) =>
    db.tx(async (tx) => {
      for (const kind of ['file', 'text', 'page', 'page', 'page'] as const) {
        await tx.insert(kbDocuments).values({
          id: await nextDocumentId(tx, kind),
          agentId: a1,
          accountId: t.accountId,
          kind,
          title: kind,
          status: 'indexed',
        })
      }
    }),
  )
  server = await startServer({ dataDir: server.dataDir, masterKey: server.masterKey, env })
  api = createApi(server.base, t.key)
  otherApi = createApi(server.base, other.key)
  readOnly = createApi(server.base, ro.body.secret)
  master = createApi(server.base, server.masterKey)
})
afterAll(async () => {
  await server?.stop('SIGKILL')
})

const versionN = (v: string) => Number(/-v(\d+)$/.exec(v)![1])

describe('GET /agents/{agt}', () => {
  it('answers the full Agent: every whitelisted key, nested voice and widget, model, versions', async () => {
    verifies('agents.read', 'envelope.single')
    const r = await api.get(`/agents/${a1}`)
    expect(r.status).toBe(200)
    const n = a1.slice(4)
    expect(r.body).toMatchObject({
      agent_id: a1,
      account_id: t.accountId,
      name: 'First',
      agent_type: 'chat',
      agent_version: `agt${n}-v1`,
      prompt_version: 'build-1-voice_chat',
      model: 'local-retrieval-1',
      instructions: 'Phone prompt v1',
      chat_instructions: 'Chat prompt v1',
      voice_chat_instructions: 'Voice chat prompt v1',
      business_name: 'Example Co',
      role: 'You answer questions about Example Co.',
      greeting_initial: 'Hello! How can I help?',
      conversation_style: 'friendly',
      refinement_rules: [],
      capabilities: [],
      capability_settings: {},
      use_large_model: false,
      temperature: 0.7,
      max_response_tokens: null,
      website_url: 'https://example.com',
      default_language: 'en',
      languages: ['en'],
      greeting: null,
      public_chat_greeting: null,
      tags: [],
      external_ids: {},
      voice: {
        provider: 'openai',
        voice_id: 'alloy',
        voice_locale: 'en',
        speaking_rate: 1,
        barge_in: true,
        style: null,
      },
      widget: { has_public_token: false, allowed_domains: [] },
      meta: { environment: 'production' },
    })
    for (const f of [...BEHAVIOURAL_FIELDS, ...NON_BEHAVIOURAL_FIELDS]) expect(r.body, f).toHaveProperty(f)
    expect(BEHAVIOURAL_FIELDS.length + NON_BEHAVIOURAL_FIELDS.length).toBe(46)
    expect(BEHAVIOURAL_FIELDS.length).toBe(20)
    expect(r.body.widget).not.toHaveProperty('public_token')
    expect(Object.keys(r.body.widget.appearance).sort()).toEqual([
      'avatar_url',
      'launcher_text',
      'position',
      'primary_color',
      'theme',
      'title',
      'welcome_message',
    ])
    expect(r.body.voice).toHaveProperty('model')
  })

  it('unknown agents and agents of another account are 404 agent_not_found; malformed ids are invalid_id', async () => {
    verifies('tenancy.agents', 'tenancy.isolation', 'conventions.ids')
    expect(err(await api.get('/agents/agt_987654321'))).toMatchObject({ code: 'agent_not_found' })
    const theirs = await api.get(`/agents/${b1}`)
    expect(theirs.status).toBe(404)
    expect(err(theirs).code).toBe('agent_not_found')
    expect((await otherApi.get(`/agents/${b1}`)).status).toBe(200)
    expect(err(await api.patch(`/agents/${b1}`, { name: 'x' })).code).toBe('agent_not_found')
    expect(err(await api.get('/agents/agt_x'))).toMatchObject({ code: 'invalid_id' })
    expect(err(await api.get('/agents/acc_1')).code).toBe('invalid_id')
  })

  it('the account alias answers the same agent; another account in the path is 404', async () => {
    verifies('agents.aliases')
    const flat = await api.get(`/agents/${a1}`)
    const alias = await api.get(`/accounts/${t.accountId}/agents/${a1}`)
    expect(alias.status).toBe(200)
    const strip = (b: any) => {
      const { meta, ...rest } = b
      return rest
    }
    expect(strip(alias.body)).toEqual(strip(flat.body))
    expect((await api.get(`/accounts/${t.userId}/agents/${a1}`)).status).toBe(200)
    expect(err(await api.get(`/accounts/${other.accountId}/agents/${b1}`)).code).toBe('agent_not_found')
    expect(err(await api.get(`/accounts/${t.accountId}/agents/${b1}`)).code).toBe('agent_not_found')
    expect(err(await api.get(`/accounts/nope/agents/${a1}`)).code).toBe('invalid_id')
  })

  it('needs agents:read', async () => {
    verifies('auth.scope')
    const none = await createApi(server.base, server.masterKey).post(`/users/${t.userId}/credentials`, {
      scopes: ['accounts:read'],
    })
    expect(err(await createApi(server.base, none.body.secret).get(`/agents/${a1}`)).code).toBe('insufficient_scope')
    expect((await readOnly.get(`/agents/${a1}`)).status).toBe(200)
  })
})

describe('GET /accounts/{acc}/agents', () => {
  it('answers {account_id, agents[], meta} with enriched summaries and knowledge counts', async () => {
    verifies('agents.read')
    const r = await api.get(`/accounts/${t.accountId}/agents`)
    expect(r.status).toBe(200)
    expect(Object.keys(r.body).sort()).toEqual(['account_id', 'agents', 'meta'])
    expect(r.body.account_id).toBe(t.accountId)
    expect(r.body.agents.map((a: any) => a.agent_id).sort()).toEqual([a1, a2].sort())
    const first = r.body.agents.find((a: any) => a.agent_id === a1)
    expect(first).toMatchObject({
      name: 'First',
      agent_type: 'chat',
      prompt_version: 'build-1-voice_chat',
      model: 'local-retrieval-1',
      website_url: 'https://example.com',
    })
    expect(first.agent_version).toMatch(/^agt\d+-v\d+$/)
    expect(first.knowledge_bases).toEqual([
      { kind: 'files', count: 2, summary_status: 'none', summary_stale: null, summary_updated_at: null },
      { kind: 'pages', count: 3, summary_status: 'none', summary_stale: null, summary_updated_at: null },
    ])
    expect(r.body.agents.find((a: any) => a.agent_id === a2).knowledge_bases.map((k: any) => k.count)).toEqual([0, 0])
    expect(err(await api.get(`/accounts/${other.accountId}/agents`)).code).toBe('not_found')
    expect(err(await api.get(`/accounts/${t.accountId}/agents?cursor=abc`)).code).toBe('unsupported_filter')
  })
})

describe('PATCH /agents/{agt}', () => {
  it('non-behavioural fields change without a new agent_version', async () => {
    verifies('agents.patch-whitelist')
    const before = (await api.get(`/agents/${a2}`)).body.agent_version
    const r = await api.patch(`/agents/${a2}`, {
      name: 'Renamed',
      tags: ['vip'],
      greeting: 'Hi',
      timezone: 'Europe/Paris',
      voice_style: 'warm',
      max_call_duration_s: 600,
    })
    expect(r.status).toBe(200)
    expect(Object.keys(r.body).sort()).toEqual([
      'agent_id',
      'agent_version',
      'changed',
      'deployed',
      'meta',
      'prompt_version',
    ])
    expect(r.body).toMatchObject({ agent_id: a2, agent_version: before, deployed: [] })
    expect(r.body.changed.sort()).toEqual([
      'greeting',
      'max_call_duration_s',
      'name',
      'tags',
      'timezone',
      'voice_style',
    ])
    expect((await api.get(`/agents/${a2}`)).body).toMatchObject({
      name: 'Renamed',
      tags: ['vip'],
      greeting: 'Hi',
      timezone: 'Europe/Paris',
      voice_style: 'warm',
      agent_version: before,
    })
  })

  it('several behavioural fields in one request bump agent_version exactly once; unchanged values bump nothing', async () => {
    verifies('agents.patch-whitelist')
    const before = (await api.get(`/agents/${a2}`)).body.agent_version
    const r = await api.patch(`/agents/${a2}`, {
      temperature: 0.2,
      role: 'New role',
      refinement_rules: ['Be brief'],
      use_large_model: true,
      name: 'Renamed',
    })
    expect(r.status).toBe(200)
    expect(versionN(r.body.agent_version)).toBe(versionN(before) + 1)
    expect(r.body.changed.sort()).toEqual(['refinement_rules', 'role', 'temperature', 'use_large_model'])
    const again = await api.patch(`/agents/${a2}`, {
      temperature: 0.2,
      role: 'New role',
      refinement_rules: ['Be brief'],
    })
    expect(again.body).toMatchObject({ agent_version: r.body.agent_version, changed: [], deployed: [] })
    expect((await api.get(`/agents/${a2}`)).body.model).toBe('local-retrieval-1')
  })

  it('a prompt field deploys a prompt version in the same request', async () => {
    verifies('agents.patch-whitelist', 'agents.prompts')
    const r = await api.patch(`/agents/${a2}`, { chat_instructions: 'Chat prompt v2', instructions: 'Phone prompt v2' })
    expect(r.status).toBe(200)
    const v = r.body.agent_version
    expect(r.body.deployed.map((p: any) => [p.type, p.label, p.agent_version, p.active])).toEqual([
      ['phone', `patch-${v}-phone`, v, true],
      ['chat', `patch-${v}-chat`, v, true],
    ])
    expect(r.body.deployed[0]).not.toHaveProperty('body')
    expect(r.body.prompt_version).toBe(`patch-${v}-chat`)
    const agent = (await api.get(`/agents/${a2}`)).body
    expect(agent).toMatchObject({
      chat_instructions: 'Chat prompt v2',
      instructions: 'Phone prompt v2',
      prompt_version: `patch-${v}-chat`,
      agent_version: v,
    })
    const chats = (await api.get(`/agents/${a2}/prompts?type=chat`)).body.data
    expect(chats.map((p: any) => [p.label, p.active])).toEqual([
      [`patch-${v}-chat`, true],
      ['build-1-chat', false],
    ])
  })

  it('takes all 46 whitelisted fields at once, with one bump', async () => {
    verifies('agents.patch-whitelist')
    const before = (await api.get(`/agents/${a1}`)).body.agent_version
    const all = {
      instructions: 'P',
      chat_instructions: 'C',
      voice_chat_instructions: 'V',
      role: 'R',
      greeting_initial: 'G',
      business_name: 'B',
      business_profile: 'BP',
      conversation_style: 'formal',
      refinement_rules: ['Reply in English.'],
      ai_provider: 'openai',
      use_large_model: true,
      temperature: 1.5,
      max_response_tokens: 500,
      capabilities: ['capture_lead'],
      capability_settings: { lead_emails: ['a@example.com'] },
      voice_id: 'nova',
      voice_locale: 'en-GB',
      speaking_rate: 1.1,
      barge_in: false,
      end_of_speech_ms: 700,
      name: 'All',
      greeting: 'g',
      public_chat_greeting: 'pcg',
      greetings: { chat: { en: 'Hi', fr: 'Salut' } },
      default_language: 'fr',
      languages: ['fr', 'en'],
      timezone: 'UTC',
      voice_style: 'calm',
      notification_emails: ['ops@example.com'],
      website_url: 'https://example.org',
      business_hours: { mon: [['09:00', '17:00']] },
      after_hours_message: 'closed',
      fallback_message: 'sorry',
      escalation_message: 'hold on',
      max_call_duration_s: 900,
      silence_timeout_s: 10,
      end_call_phrases: ['bye'],
      collect_identity: true,
      record_calls: true,
      summary_language: 'en',
      tags: ['t'],
      external_ids: { crm: '42' },
      metadata: { k: 1 },
      description: 'd',
      // A gate on an agent without tests: nothing to run, the prompts deploy (decisions "Test gate").
      test_gate: { min_pass_rate: 0.5 },
      // Weekly: a sweep finds nothing due right after the build fetched the pages (decisions "Knowledge sync").
      kb_sync: { schedule: 'weekly', deletion: 'remove', reindex: false },
    }
    expect(Object.keys(all).length).toBe(46)
    const r = await api.patch(`/agents/${a1}`, all)
    expect(r.status).toBe(200)
    expect(versionN(r.body.agent_version)).toBe(versionN(before) + 1)
    expect(r.body.deployed.map((p: any) => p.type)).toEqual(['phone', 'chat', 'voice_chat'])
    const agent = (await api.get(`/agents/${a1}`)).body
    const { ai_provider, ...rest } = all
    expect(agent).toMatchObject(rest)
    expect(agent.model).toBe('local-retrieval-1')
    expect(agent.voice).toMatchObject({
      voice_id: 'nova',
      voice_locale: 'en-GB',
      speaking_rate: 1.1,
      barge_in: false,
      style: 'calm',
    })
    expect(r.body.changed).not.toContain('ai_provider')
    // external_ids merge key by key; null clears.
    await api.patch(`/agents/${a1}`, { external_ids: { erp: 'e', crm: null } })
    expect((await api.get(`/agents/${a1}`)).body.external_ids).toEqual({ erp: 'e' })
  })

  it('refuses unknown fields, empty bodies and bad values; needs agents:write', async () => {
    verifies(
      'agents.patch-whitelist',
      'errors.unsupported_field',
      'errors.empty_update',
      'errors.validation_error',
      'auth.scope',
    )
    const p = (b: unknown) => api.patch(`/agents/${a1}`, b)
    expect(err(await p({ agent_version: 'x' }))).toMatchObject({ code: 'unsupported_field', field: 'agent_version' })
    expect(err(await p({ model: 'gpt' }))).toMatchObject({ code: 'unsupported_field', field: 'model' })
    expect(err(await p({ name: 'ok', prompt_version: 'x' }))).toMatchObject({
      code: 'unsupported_field',
      field: 'prompt_version',
    })
    expect(err(await p({})).code).toBe('empty_update')
    expect(err(await api.request('PATCH', `/agents/${a1}`, { raw: '' })).code).toBe('empty_update')
    expect(err(await p({ temperature: 3 }))).toMatchObject({ code: 'validation_error', field: 'temperature' })
    expect(err(await p({ temperature: 'hot' }))).toMatchObject({ code: 'validation_error', field: 'temperature' })
    expect(err(await p({ speaking_rate: 0.1 }))).toMatchObject({ code: 'validation_error', field: 'speaking_rate' })
    expect(err(await p({ tags: 'vip' }))).toMatchObject({ code: 'validation_error', field: 'tags' })
    expect(err(await p({ refinement_rules: [1] }))).toMatchObject({
      code: 'validation_error',
      field: 'refinement_rules.0',
    })
    expect(err(await p({ use_large_model: 'yes' }))).toMatchObject({
      code: 'validation_error',
      field: 'use_large_model',
    })
    expect(err(await p({ max_response_tokens: 1.5 }))).toMatchObject({
      code: 'validation_error',
      field: 'max_response_tokens',
    })
    expect(err(await p({ name: '' }))).toMatchObject({ code: 'validation_error', field: 'name' })
    expect(err(await p({ timezone: 'Mars/Olympus' }))).toMatchObject({ code: 'validation_error', field: 'timezone' })
    expect(err(await p({ notification_emails: ['nope'] }))).toMatchObject({
      code: 'validation_error',
      field: 'notification_emails.0',
    })
    expect(err(await p({ website_url: 'ftp://x.example' }))).toMatchObject({
      code: 'validation_error',
      field: 'website_url',
    })
    expect(err(await p({ greetings: { fax: { en: 'x' } } }))).toMatchObject({ code: 'validation_error' })
    expect(err(await p({ capabilities: ['a', 'a'] }))).toMatchObject({
      code: 'validation_error',
      field: 'capabilities.1',
    })
    expect(err(await readOnly.patch(`/agents/${a1}`, { name: 'x' })).code).toBe('insufficient_scope')
  })

  it('the account alias patches like the flat route', async () => {
    verifies('agents.aliases')
    const r = await api.patch(`/accounts/${t.accountId}/agents/${a2}`, { description: 'via alias' })
    expect(r.status).toBe(200)
    expect(r.body.changed).toEqual(['description'])
    expect((await api.get(`/agents/${a2}`)).body.description).toBe('via alias')
    expect(err(await api.patch(`/accounts/${other.accountId}/agents/${b1}`, { description: 'x' })).code).toBe(
      'agent_not_found',
    )
    expect(err(await api.patch(`/accounts/${t.accountId}/agents/${a2}`, { bogus: 1 }))).toMatchObject({
      code: 'unsupported_field',
      field: 'bogus',
    })
  })
})

describe('the master key on agent routes', () => {
  it('needs X-Svc-Account (403 forbidden_account without it); with it the call runs for that account', async () => {
    verifies('tenancy.agents', 'auth.master-data-route')
    const bare = await master.get(`/agents/${a1}`)
    expect(bare.status).toBe(403)
    expect(err(bare)).toMatchObject({ code: 'forbidden_account', field: 'account_id' })
    expect(err(await master.get(`/accounts/${t.accountId}/agents`)).code).toBe('forbidden_account')
    const h = { headers: { 'x-svc-account': t.accountId } }
    expect((await master.get(`/agents/${a1}`, h)).status).toBe(200)
    expect((await master.get(`/accounts/${t.accountId}/agents`, h)).body.agents).toHaveLength(2)
    expect((await master.patch(`/agents/${a2}`, { description: 'by operator' }, h)).status).toBe(200)
    expect(err(await master.get(`/agents/${b1}`, h)).code).toBe('agent_not_found')
    expect(err(await master.get(`/accounts/${other.accountId}/agents/${b1}`, h)).code).toBe('agent_not_found')
  })
})
