// The MCP connector over HTTP against the built server, driven by the MCP SDK's own client (and the MCP
// Inspector CLI) with a personal key as the bearer: handshake, tool list and schemas, an agent built and
// read, a chat through tools, cursors, scope and tenancy failures as tool errors, the audit row of a
// tool call, and the raw HTTP rules (405, 401 challenge, 406).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import Ajv2020 from 'ajv/dist/2020.js'
import { createApi } from '../helpers/api'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, ALL_PERSONAL_SCOPES, type Tenant } from '../helpers/tenant'
import { runInspector } from '../helpers/inspector'
import { verifies } from '../requirements'
import { sleep, until } from '../helpers/wait'

const base = inject('base')
const origin = inject('origin')
const master = createApi(base, inject('masterKey'))

let clients = 0
/** Each client its own X-Forwarded-For, as createApi does, so failed-auth counting stays per test. */
const clientIp = () => `198.51.${(process.pid >> 8) & 255}.${++clients}`

async function connect(key: string, opts: { path?: string; headers?: Record<string, string> } = {}) {
  const client = new Client({ name: 'svc-e2e', version: '1.0.0' })
  const headers = { authorization: `Bearer ${key}`, 'x-forwarded-for': clientIp(), ...opts.headers }
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${origin}${opts.path ?? '/mcp'}`), { requestInit: { headers } }),
  )
  return client
}

type ToolResult = { isError?: boolean; structuredContent?: any; content: { type: string; text?: string }[] }
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as ToolResult

/** A successful tool result's structured content; fails the test with the tool's error otherwise. */
async function ok(client: Client, name: string, args: Record<string, unknown> = {}) {
  const r = await call(client, name, args)
  expect(r.isError, `${name}: ${r.content[0]?.text}`).toBeFalsy()
  expect(r.content[0].type).toBe('text')
  expect(JSON.parse(r.content[0].text!)).toEqual(r.structuredContent)
  return r.structuredContent
}

const raw = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
  fetch(`${origin}${path}`, { ...init, headers: { 'x-forwarded-for': clientIp(), ...init.headers } })

const JSONRPC_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })

describe('MCP connector', () => {
  let t: Tenant
  let other: Tenant
  let site: TestSite
  let client: Client
  let agentId: string
  let voiceId: string
  /** SVC_PUBLIC_URL as the server sees it (the test servers listen on a port they choose). */
  let publicUrl: string

  beforeAll(async () => {
    site = await serveSite({
      '/': {
        body: html(
          'Platypus Pottery | Home',
          '<h1>Platypus Pottery</h1><p>Platypus Pottery runs wheel-throwing classes in Ballarat.</p><a href="/classes">Classes</a>',
        ),
      },
      '/classes': {
        body: html(
          'Classes | Platypus Pottery',
          '<p>A beginner class costs $45 and lasts three hours.</p><p>Classes run on Saturdays from 10am.</p>',
        ),
      },
    })
    t = await createTenant(master)
    other = await createTenant(master)
    voiceId = (await t.api.get('/voices')).body.data[0].voice_id
    client = await connect(t.key)
    publicUrl = (await master.get('/openapi.json')).body.servers[0].url.replace(/\/v1$/, '')
  }, 60_000)
  afterAll(async () => {
    await client?.close()
    await site?.close()
  })

  it('initializes statelessly with server info and instructions, and lists tools with valid input schemas and annotations', async () => {
    verifies('mcp.connector', 'mcp.tools')
    expect(client.getServerVersion()).toMatchObject({ name: 'conversational-agent-service', version: '1.0.0' })
    expect(client.getInstructions()).toContain('build_agent')
    expect(client.getServerCapabilities()?.tools).toBeDefined()
    const { tools } = await client.listTools()
    const names = tools.map((x) => x.name)
    for (const n of [
      'list_agents',
      'get_agent',
      'build_agent',
      'get_build',
      'update_agent',
      'list_prompt_versions',
      'deploy_prompt_version',
      'restore_prompt_version',
      'add_knowledge_text',
      'add_knowledge_url',
      'reindex_knowledge',
      'get_knowledge_status',
      'get_knowledge_summary',
      'start_conversation',
      'send_message',
      'end_conversation',
      'list_conversations',
      'get_conversation',
      'get_usage',
      'get_limits',
    ]) {
      expect(names).toContain(n)
    }
    expect(new Set(names).size).toBe(names.length)
    const ajv = new Ajv2020({ strict: false })
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object')
      expect(() => ajv.compile(tool.inputSchema), tool.name).not.toThrow()
      expect(typeof tool.description).toBe('string')
      expect(tool.annotations?.readOnlyHint, tool.name).toBeTypeOf('boolean')
      expect(tool.annotations?.openWorldHint, tool.name).toBeTypeOf('boolean')
      expect(tool.name).toMatch(/^[a-z]+(_[a-z]+)*$/)
    }
    const byName = Object.fromEntries(tools.map((x) => [x.name, x]))
    expect(byName.list_agents.annotations).toMatchObject({ readOnlyHint: true })
    expect(byName.build_agent.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      openWorldHint: true,
    })
    // Inputs come from the REST schemas: path ids renamed, body keys kept, unknown keys refused.
    expect(byName.get_agent.inputSchema).toMatchObject({ required: ['agent_id'], additionalProperties: false })
    expect((byName.build_agent.inputSchema.required as string[]).sort()).toEqual(['voice_id', 'website_url'])
    expect(Object.keys(byName.add_knowledge_text.inputSchema.properties!)).toEqual(
      expect.arrayContaining(['agent_id', 'title', 'text']),
    )
    expect(Object.keys(byName.add_knowledge_url.inputSchema.properties!)).toEqual(
      expect.arrayContaining(['agent_id', 'url', 'mode']),
    )
    expect(byName.update_agent.inputSchema.properties).not.toHaveProperty('capability_settings')
    expect(byName.list_conversations.inputSchema.properties).toMatchObject({
      limit: { type: 'integer' },
      cursor: { type: 'string' },
    })
    // A tool whose REST route is not in this build is not offered (the webhooks list lights up with its route).
    const doc = (await master.get('/openapi.json')).body
    expect(names.includes('list_webhook_endpoints')).toBe(!!doc.paths['/webhooks/endpoints']?.get)
  })

  it('builds an agent, follows the build and reads the agent through tools', async () => {
    verifies('mcp.tools')
    const accepted = await ok(client, 'build_agent', {
      website_url: `${site.origin}/`,
      voice_id: voiceId,
      name: 'Pottery helper',
    })
    expect(accepted.agent_id).toMatch(/^agt_\d+$/)
    agentId = accepted.agent_id
    let build: any
    for (const deadline = Date.now() + 60_000; ; ) {
      build = await ok(client, 'get_build', { agent_id: agentId })
      if (build.status === 'succeeded' || build.status === 'failed') break
      if (Date.now() > deadline) throw new Error(`build still ${build.status}`)
      await sleep(300)
    }
    expect(build.status).toBe('succeeded')
    const agent = await ok(client, 'get_agent', { agent_id: agentId })
    expect(agent).toMatchObject({ agent_id: agentId, account_id: t.accountId, name: 'Pottery helper' })
    // The same object REST answers, apart from the request id in meta.
    const rest = await t.api.get(`/agents/${agentId}`)
    expect({ ...agent, meta: undefined }).toEqual({ ...rest.body, meta: undefined })
    const list = await ok(client, 'list_agents')
    expect(list.agents.map((a: any) => a.agent_id)).toContain(agentId)
    // A patch of a safe field goes through the REST validation.
    const patched = await ok(client, 'update_agent', { agent_id: agentId, conversation_style: 'Warm and brief.' })
    expect(JSON.stringify(patched)).toContain('conversation_style')
    const bad = await call(client, 'update_agent', { agent_id: agentId, temperature: 5 })
    expect(bad.isError).toBe(true)
    expect(bad.structuredContent.error).toMatchObject({ status: 400, code: 'validation_error', field: 'temperature' })
    const empty = await call(client, 'update_agent', { agent_id: agentId })
    expect(empty.structuredContent.error).toMatchObject({ status: 400, code: 'empty_update' })
    const unknown = await call(client, 'update_agent', { agent_id: agentId, capabilities: ['capture_lead'] })
    expect(unknown.structuredContent.error).toMatchObject({ code: 'unsupported_field', field: 'capabilities' })
    const versions = await ok(client, 'list_prompt_versions', { agent_id: agentId, type: 'chat' })
    expect(versions.data.length).toBeGreaterThan(0)
    const status = await ok(client, 'get_knowledge_status', { agent_id: agentId })
    expect(status).toHaveProperty('summary')
  }, 90_000)

  it('starts a conversation, sends a message and sees the answer, ends it, and pages conversations with a cursor', async () => {
    verifies('mcp.tools')
    expect(agentId).toBeDefined()
    const convIds: string[] = []
    for (let i = 0; i < 2; i++) {
      const conv = await ok(client, 'start_conversation', { agent_id: agentId })
      expect(conv.conversation_id).toMatch(/^conv_p\d+$/)
      convIds.push(conv.conversation_id)
    }
    const answer = await ok(client, 'send_message', {
      conversation_id: convIds[1],
      text: 'How much does a beginner class cost?',
    })
    expect(answer.turn.speaker).toBe('agent')
    expect(answer.turn.text.length).toBeGreaterThan(0)
    expect(answer.usage.tokens.total).toBeGreaterThan(0)
    const ended = await ok(client, 'end_conversation', { conversation_id: convIds[1] })
    expect(ended).toMatchObject({ conversation_id: convIds[1], status: 'completed' })
    const page1 = await ok(client, 'list_conversations', { agent_id: [agentId], limit: 1 })
    expect(page1.data).toHaveLength(1)
    expect(page1.pagination.has_more).toBe(true)
    const page2 = await ok(client, 'list_conversations', {
      agent_id: [agentId],
      limit: 1,
      cursor: page1.pagination.next_cursor,
    })
    expect(page2.data).toHaveLength(1)
    expect([page1.data[0].conversation_id, page2.data[0].conversation_id].sort()).toEqual([...convIds].sort())
    // The cursor is bound to its query, as on REST.
    const rebound = await call(client, 'list_conversations', { limit: 2, cursor: page1.pagination.next_cursor })
    expect(rebound.structuredContent.error).toMatchObject({ code: 'invalid_cursor', status: 400 })
    const detail = await ok(client, 'get_conversation', { conversation_id: convIds[1], include: 'transcript' })
    expect(detail.transcript.length).toBeGreaterThanOrEqual(2)
  }, 90_000)

  it('deploys and restores prompt versions, adds a page, reindexes, and reads usage and limits through tools', async () => {
    verifies('mcp.tools')
    expect(agentId).toBeDefined()
    const label = `mcp-${Date.now()}`
    const deployed = await ok(client, 'deploy_prompt_version', {
      agent_id: agentId,
      type: 'chat',
      body: 'You are the pottery studio assistant. Be brief.',
      label,
    })
    expect(JSON.stringify(deployed)).toContain(label)
    const dup = await call(client, 'deploy_prompt_version', { agent_id: agentId, type: 'chat', body: 'Again.', label })
    expect(dup.structuredContent.error).toMatchObject({ status: 409, code: 'version_label_exists' })
    const versions = (await ok(client, 'list_prompt_versions', { agent_id: agentId, type: 'chat' })).data
    const older = versions.find((x: any) => x.label !== label)
    expect(older).toBeDefined()
    const restored = await ok(client, 'restore_prompt_version', { agent_id: agentId, prompt_version_id: older.id })
    expect(JSON.stringify(restored)).toContain('-restored')
    const page = await ok(client, 'add_knowledge_url', {
      agent_id: agentId,
      url: `${site.origin}/classes`,
      mode: 'page',
    })
    expect(page).toMatchObject({ status: 'processing' })
    const docs = await ok(client, 'list_knowledge_documents', { agent_id: agentId, limit: 10 })
    expect(docs.data.length).toBeGreaterThan(0)
    expect(await ok(client, 'reindex_knowledge', { agent_id: agentId })).toMatchObject({
      agent_id: agentId,
      status: 'rebuild_requested',
    })
    const summary = await ok(client, 'get_knowledge_summary', { agent_id: agentId })
    expect(summary).toHaveProperty('version')
    const now = new Date()
    const usage = await ok(client, 'get_usage', {
      from: new Date(now.getTime() - 86_400_000).toISOString(),
      to: new Date(now.getTime() + 60_000).toISOString(),
    })
    expect(Array.isArray(usage.data)).toBe(true)
    const missing = await call(client, 'get_usage', {})
    expect(missing.isError).toBe(true)
    expect(missing.structuredContent.error.status).toBe(400)
    const limits = await ok(client, 'get_limits')
    expect(limits).toMatchObject({ account_id: t.accountId })
    expect(limits.quotas.builds.used).toBeGreaterThanOrEqual(1)
  }, 60_000)

  it('adds knowledge through tools; a key without kb:write neither sees nor can use them (tool error, not HTTP 403)', async () => {
    verifies('mcp.tools', 'mcp.auth')
    expect(agentId).toBeDefined()
    const added = await ok(client, 'add_knowledge_text', {
      agent_id: agentId,
      title: 'Gift cards',
      text: 'Gift cards are sold in $25 steps.',
    })
    expect(added).toMatchObject({ status: 'processing' })
    const narrow = await master.post(`/users/${t.userId}/credentials`, {
      name: 'narrow',
      scopes: ALL_PERSONAL_SCOPES.filter((s) => s !== 'kb:write'),
    })
    expect(narrow.status).toBe(201)
    const c = await connect(narrow.body.secret)
    try {
      const names = (await c.listTools()).tools.map((x) => x.name)
      expect(names).toContain('get_knowledge_status')
      expect(names).not.toContain('add_knowledge_text')
      expect(names).not.toContain('reindex_knowledge')
      const r = await call(c, 'add_knowledge_text', { agent_id: agentId, text: 'Not allowed.' })
      expect(r.isError).toBe(true)
      expect(r.structuredContent.error).toMatchObject({ status: 403, code: 'insufficient_scope' })
      expect(r.content[0].text).toContain('kb:write')
      await expect(c.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool/)
    } finally {
      await c.close()
    }
  })

  it('places a call, reads it, lists a number on do-not-call and reads campaign progress through tools, with the REST scopes', async () => {
    verifies('outbound.mcp')
    const to = `+1415557${String(process.pid % 10_000)
      .padStart(4, '0')
      .slice(0, 3)}0`
    const placed = await ok(client, 'place_call', { agent_id: agentId, to: `${to.slice(0, -4)}0000`, role: 'a caller' })
    expect(placed).toMatchObject({ call_id: expect.stringMatching(/^call_\d+$/), status: 'ringing' })
    const done = await until(
      'the call to end',
      async () => {
        const c = await ok(client, 'get_call', { call_id: placed.call_id })
        return c.status === 'no_answer' ? c : null
      },
      20_000,
    )
    expect(done).toMatchObject({ outcome: 'no_answer' })
    const listed = await ok(client, 'add_to_do_not_call', { phone: to, reason: 'asked by phone' })
    expect(listed).toMatchObject({ phone_e164: to, source: 'api' })
    const refused = await call(client, 'place_call', { agent_id: agentId, to, role: 'a caller' })
    expect(refused.isError).toBe(true)
    expect(refused.content[0].text).toContain('dnc_listed')
    const missing = await call(client, 'get_campaign_progress', { campaign_id: 'cmp_999999999' })
    expect(missing.isError).toBe(true)
    expect(missing.content[0].text).toContain('not_found')
    // Listed with the rest (their scopes are the REST routes' outbound:read and outbound:write).
    const tools = (await client.listTools()).tools
    expect(tools.map((x) => x.name)).toEqual(
      expect.arrayContaining(['place_call', 'get_call', 'add_to_do_not_call', 'get_campaign_progress']),
    )
  })

  it("another tenant's agent or conversation is a not-found tool error", async () => {
    verifies('mcp.tools', 'mcp.tenancy')
    expect(agentId).toBeDefined()
    const c = await connect(other.key)
    try {
      for (const [name, args] of [
        ['get_agent', { agent_id: agentId }],
        ['get_build', { agent_id: agentId }],
        ['add_knowledge_text', { agent_id: agentId, text: 'x' }],
        ['start_conversation', { agent_id: agentId }],
      ] as const) {
        const r = await call(c, name, args)
        expect(r.isError, name).toBe(true)
        expect(r.structuredContent.error, name).toMatchObject({ status: 404, code: 'agent_not_found' })
      }
      const mine = await ok(c, 'list_agents')
      expect(mine.agents.map((a: any) => a.agent_id)).not.toContain(agentId)
      // Naming the other account is refused as on REST.
      const r = await call(c, 'list_agents', { account_id: t.accountId })
      expect(r.isError).toBe(true)
      expect(r.structuredContent.error.status).toBeGreaterThanOrEqual(403)
    } finally {
      await c.close()
    }
  })

  it('a tool call writes the same audit row as the REST request', async () => {
    verifies('mcp.tools', 'audit.rows')
    expect(agentId).toBeDefined()
    const key = await master.post(`/users/${t.userId}/credentials`, { name: 'audited', scopes: ['agents:read'] })
    const ip = '198.51.100.77'
    const requestId = `mcp-audit-${Date.now()}`
    const c = await connect(key.body.secret, {
      headers: { 'x-forwarded-for': ip, 'x-request-id': requestId, 'user-agent': 'svc-e2e-agent' },
    })
    try {
      await ok(c, 'get_agent', { agent_id: agentId })
    } finally {
      await c.close()
    }
    const restId = `rest-audit-${Date.now()}`
    const rest = await createApi(base, key.body.secret).get(`/agents/${agentId}`, {
      headers: { 'x-forwarded-for': ip, 'x-request-id': restId, 'user-agent': 'svc-e2e-agent' },
    })
    expect(rest.status).toBe(200)
    let rows: any[] = []
    for (const deadline = Date.now() + 10_000; rows.length < 2 && Date.now() < deadline; await sleep(200)) {
      rows = (await master.get(`/audit?credential_id=${key.body.key_id}`)).body.data
    }
    const mcpRow = rows.find((r) => r.request_id === requestId)
    const restRow = rows.find((r) => r.request_id === restId)
    expect(mcpRow).toBeDefined()
    expect(restRow).toBeDefined()
    // Only the tool call is audited (not initialize or tools/list), as the REST route it stands for.
    expect(rows.filter((r) => r.request_id === requestId)).toHaveLength(1)
    const comparable = (r: any) => ({ ...r, request_id: undefined, duration_ms: undefined, created_at: undefined })
    expect(comparable(mcpRow)).toEqual(comparable(restRow))
    expect(mcpRow).toMatchObject({
      method: 'GET',
      path: `/v1/agents/${agentId}`,
      status_code: 200,
      credential_type: 'personal',
      credential_id: key.body.key_id,
      ip,
      user_agent: 'svc-e2e-agent',
      account_ids: [t.accountId],
    })
  })

  it('applies the key ip_allowlist to the connector itself', async () => {
    verifies('mcp.auth')
    const key = await master.post(`/users/${t.userId}/credentials`, {
      name: 'pinned',
      scopes: ['agents:read'],
      ip_allowlist: ['203.0.113.9'],
    })
    expect(key.status).toBe(201)
    const denied = await raw('/mcp', {
      method: 'POST',
      body: LIST,
      headers: { ...JSONRPC_HEADERS, authorization: `Bearer ${key.body.secret}`, 'x-forwarded-for': '203.0.113.10' },
    })
    expect(denied.status).toBe(403)
    expect((await denied.json()).error.data.code).toBe('ip_not_allowed')
    const allowed = await raw('/mcp', {
      method: 'POST',
      body: LIST,
      headers: { ...JSONRPC_HEADERS, authorization: `Bearer ${key.body.secret}`, 'x-forwarded-for': '203.0.113.9' },
    })
    expect(allowed.status).toBe(200)
    expect((await allowed.json()).result.tools.length).toBeGreaterThan(0)
  })

  describe('raw HTTP', () => {
    it('GET, DELETE and PUT answer 405 with Allow: POST and a JSON-RPC body, on /mcp and /v1/mcp', async () => {
      verifies('mcp.connector')
      for (const path of ['/mcp', '/v1/mcp', '/mcp/']) {
        for (const method of ['GET', 'DELETE', 'PUT']) {
          const r = await raw(path, {
            method,
            headers: { authorization: `Bearer ${t.key}`, accept: 'text/event-stream' },
          })
          expect(r.status, `${method} ${path}`).toBe(405)
          expect(r.headers.get('allow')).toBe('POST')
          expect(r.headers.get('mcp-session-id')).toBeNull()
          const body = await r.json()
          expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } })
          expect(body).not.toHaveProperty('meta')
        }
      }
    })

    it('answers JSON (not SSE) without a session id, on /mcp, /v1/mcp and /api/v1/mcp', async () => {
      verifies('mcp.connector')
      for (const path of ['/mcp', '/v1/mcp', '/api/v1/mcp']) {
        const r = await raw(path, {
          method: 'POST',
          body: LIST,
          headers: { ...JSONRPC_HEADERS, authorization: `Bearer ${t.key}` },
        })
        expect(r.status, path).toBe(200)
        expect(r.headers.get('content-type')).toContain('application/json')
        expect(r.headers.get('mcp-session-id')).toBeNull()
        expect(r.headers.get('x-request-id')).toBeTruthy()
        const body = await r.json()
        expect(body).toMatchObject({ jsonrpc: '2.0', id: 1 })
        expect(body.result.tools.length).toBeGreaterThan(10)
      }
      // A notification is accepted without a body.
      const note = await raw('/mcp', {
        method: 'POST',
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
        headers: { ...JSONRPC_HEADERS, authorization: `Bearer ${t.key}` },
      })
      expect(note.status).toBe(202)
    })

    it('without a token: 401 with the resource-metadata challenge and scope, no error code', async () => {
      verifies('mcp.auth')
      for (const path of ['/mcp', '/v1/mcp']) {
        const r = await raw(path, { method: 'POST', body: LIST, headers: JSONRPC_HEADERS })
        expect(r.status).toBe(401)
        const h = r.headers.get('www-authenticate')!
        expect(h).toMatch(/^Bearer /)
        expect(h).toContain(`resource_metadata="${publicUrl}/.well-known/oauth-protected-resource${path}"`)
        expect(h).toMatch(/scope="[a-z:_ ]+"/)
        expect(h).toContain('agents:read')
        expect(h).not.toContain('error=')
        const body = await r.json()
        expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'missing_credentials' } } })
        expect(body).not.toHaveProperty('meta')
      }
    })

    it('a bad, revoked or master token: 401 with error="invalid_token"', async () => {
      verifies('mcp.auth')
      const revoked = await master.post(`/users/${t.userId}/credentials`, { name: 'gone', scopes: ['agents:read'] })
      expect((await master.delete(`/credentials/${revoked.body.key_id}`)).status).toBeLessThan(300)
      for (const token of ['svc_sk_live_' + 'x'.repeat(48), revoked.body.secret, inject('masterKey')]) {
        const r = await raw('/mcp', {
          method: 'POST',
          body: LIST,
          headers: { ...JSONRPC_HEADERS, authorization: `Bearer ${token}` },
        })
        expect(r.status).toBe(401)
        const h = r.headers.get('www-authenticate')!
        expect(h).toContain(`resource_metadata="${publicUrl}/.well-known/oauth-protected-resource/mcp"`)
        expect(h).toContain('error="invalid_token"')
        expect(h).toMatch(/error_description="[^"]+"/)
      }
    })

    it('failed authentications count per client IP together with REST: past 20 a minute, 429 with Retry-After', async () => {
      verifies('mcp.auth')
      const ip = clientIp()
      const bad = { ...JSONRPC_HEADERS, authorization: `Bearer svc_sk_live_${'y'.repeat(48)}`, 'x-forwarded-for': ip }
      const statuses: number[] = []
      for (let i = 0; i < 20; i++)
        statuses.push((await raw('/mcp', { method: 'POST', body: LIST, headers: bad })).status)
      expect(statuses.every((s) => s === 401)).toBe(true)
      const limited = await raw('/mcp', { method: 'POST', body: LIST, headers: bad })
      expect(limited.status).toBe(429)
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
      expect((await limited.json()).error.data.code).toBe('rate_limited')
      // The same counter as REST: the next bad REST attempt from that address is limited too.
      const rest = await createApi(base).get(`/accounts/${t.accountId}/agents`, {
        headers: { authorization: bad.authorization, 'x-forwarded-for': ip },
      })
      expect(rest.status).toBe(429)
    })

    it('a wrong Accept is 406 and a wrong Content-Type 415 from the transport', async () => {
      verifies('mcp.connector')
      const auth = { authorization: `Bearer ${t.key}` }
      const r = await raw('/mcp', {
        method: 'POST',
        body: LIST,
        headers: { ...auth, 'content-type': 'application/json', accept: 'application/json' },
      })
      expect(r.status).toBe(406)
      expect((await r.json()).jsonrpc).toBe('2.0')
      const u = await raw('/mcp', {
        method: 'POST',
        body: LIST,
        headers: { ...auth, 'content-type': 'text/plain', accept: JSONRPC_HEADERS.accept },
      })
      expect(u.status).toBe(415)
      const bad = await raw('/mcp', { method: 'POST', body: '{"jsonrpc":', headers: { ...auth, ...JSONRPC_HEADERS } })
      expect(bad.status).toBe(400)
      expect((await bad.json()).error.code).toBe(-32700)
    })

    it('a body above 2 MB is 413 with a JSON-RPC body, not the REST envelope', async () => {
      verifies('mcp.connector')
      const big = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { pad: 'x'.repeat(2 * 1024 * 1024) },
      })
      const r = await raw('/mcp', {
        method: 'POST',
        body: big,
        headers: { ...JSONRPC_HEADERS, authorization: `Bearer ${t.key}` },
      })
      expect(r.status).toBe(413)
      const body = await r.json()
      expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'payload_too_large' } } })
      expect(body).not.toHaveProperty('meta')
    })

    it('is described in the OpenAPI document on the origin root and /v1', async () => {
      verifies('mcp.connector', 'openapi.document')
      const doc = (await master.get('/openapi.json')).body
      const item = doc.paths['/mcp']
      expect(item.post.summary).toContain('MCP')
      expect(item.post.responses['405'].description).toContain('Allow: POST')
      expect(item.servers.map((s: any) => s.url)).toEqual([publicUrl, `${publicUrl}/v1`, `${publicUrl}/api/v1`])
    })
  })

  it('the MCP Inspector CLI lists the tools with a bearer header', async () => {
    verifies('mcp.connector')
    const out = await runInspector(`${origin}/mcp`, t.key)
    expect(out.code, out.stderr).toBe(0)
    const listed = JSON.parse(out.stdout).tools.map((x: any) => x.name)
    expect(listed).toEqual(expect.arrayContaining(['list_agents', 'send_message', 'list_conversations']))
  }, 60_000)
})
