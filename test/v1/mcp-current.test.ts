// The connector at the MCP 2025-11-25 revision (issue 34, tools side), driven by clients nobody on this
// team wrote: the MCP SDK client (with its own OAuth provider for step-up), the MCP Inspector CLI, and raw
// JSON-RPC for the protocol revisions. Titles and annotations on every tool in a fixed order, invalid
// inputs as tool errors naming the input, scope step-up through a 403 challenge, every SDK revision.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { SUPPORTED_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js'
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { TOOL_SPECS } from '~/http/mcp/catalogue'
import { createApi } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { Browser, MemoryProvider } from '../helpers/oauth'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, ALL_PERSONAL_SCOPES, type Tenant } from '../helpers/tenant'
import { runInspector } from '../helpers/inspector'
import { verifies } from '../requirements'

const origin = inject('origin')
const base = inject('base')
const master = createApi(base, inject('masterKey'))
const CB = 'http://127.0.0.1:53682/cb'
const info = { name: 'mcp-current', version: '1.0.0' }
const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const
const JSONRPC = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

type ToolResult = { isError?: boolean; structuredContent?: any; content: { type: string; text?: string }[] }

let ips = 0
const clientIp = () => `198.18.${(process.pid >> 8) & 255}.${++ips}`

async function connectWithKey(key: string) {
  const client = new Client(info)
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': clientIp() } },
    }),
  )
  return client
}

/** A client that keeps no refresh token: SDK 1.x step-up only re-authorizes when it cannot refresh (see below). */
class NoRefreshProvider extends MemoryProvider {
  override tokens() {
    return this.saved && { ...this.saved, refresh_token: undefined }
  }
}

/** fetch for the SDK transport that remembers each /mcp answer's status and challenge. */
function recordingFetch(log: { method: string; status: number; challenge: string | null }[]) {
  return async (input: string | URL | Request, init?: RequestInit) => {
    const res = await fetch(input, init)
    log.push({ method: init?.method ?? 'GET', status: res.status, challenge: res.headers.get('www-authenticate') })
    return res
  }
}

describe('MCP at the current revision: tools', () => {
  let t: Tenant
  let site: TestSite
  let agentId: string
  let client: Client

  beforeAll(async () => {
    site = await serveSite({
      '/': {
        body: html(
          'Quokka Quilts | Home',
          '<h1>Quokka Quilts</h1><p>Quokka Quilts sews patchwork quilts to order in Fremantle.</p>',
        ),
      },
    })
    t = await createTenant(master)
    agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    client = await connectWithKey(t.key)
  }, 120_000)
  afterAll(async () => {
    await client?.close()
    await site?.close()
  })

  it('lists every tool with a title and the four annotations, in the declared order, the same on every call and path', async () => {
    verifies('mcp.tools.annotations')
    const first = (await client.listTools()).tools
    const names = first.map((x) => x.name)
    // Every route of the catalogue is in this build, so the full catalogue is served, in its declared order
    // (a constant of the code: the same in every process and after every restart).
    expect(names).toEqual(TOOL_SPECS.map((s) => s.name))
    const declared = Object.fromEntries(TOOL_SPECS.map((s) => [s.name, s]))
    for (const tool of first) {
      expect(tool.title, tool.name).toBe(declared[tool.name].title)
      expect(tool.annotations?.title, tool.name).toBe(tool.title)
      for (const h of HINTS) expect(tool.annotations?.[h], `${tool.name}.${h}`).toBe(declared[tool.name].annotations[h])
    }
    expect(first.find((x) => x.name === 'get_agent')!.annotations).toEqual({
      title: 'Read an agent',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    })
    expect(first.find((x) => x.name === 'end_conversation')!.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    })
    // Again, from a fresh client and on /v1/mcp: identical.
    expect((await client.listTools()).tools).toEqual(first)
    const again = new Client(info)
    await again.connect(
      new StreamableHTTPClientTransport(new URL(`${origin}/v1/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${t.key}`, 'x-forwarded-for': clientIp() } },
      }),
    )
    expect((await again.listTools()).tools).toEqual(first)
    await again.close()
  })

  it('answers an invalid input with isError naming the tool input and the rule, and changes nothing', async () => {
    verifies('mcp.tools.input-errors')
    const before = (await t.api.get(`/agents/${agentId}`)).body
    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as ToolResult
    const cases: [string, Record<string, unknown>, string, RegExp][] = [
      ['update_agent', { agent_id: agentId, temperature: 9, greeting: 'Changed?' }, 'temperature', /0 to 2/],
      ['update_agent', { agent_id: agentId, temperature: 'hot' }, 'temperature', /Expected number/],
      ['update_agent', { agent_id: agentId, colour: 'red' }, 'colour', /Unknown argument/],
      // The route's path parameter is `agt`; the model sent `agent_id`, and that is the name it gets back.
      ['get_agent', { agent_id: 'agent-seven' }, 'agent_id', /agt_<n>/],
      ['get_agent', {}, 'agent_id', /required/],
      ['list_agents', { account_id: 'seven' }, 'account_id', /acc_<n>/],
      ['list_conversations', { limit: 0 }, 'limit', /from 1 to/],
    ]
    for (const [name, args, field, rule] of cases) {
      const r = await call(name, args)
      const what = `${name} ${JSON.stringify(args)}: ${r.content[0]?.text}`
      expect(r.isError, what).toBe(true)
      expect(r.structuredContent.error.field, what).toBe(field)
      expect(r.structuredContent.error.status, what).toBe(400)
      expect(r.content[0].text, what).toContain(field)
      expect(r.content[0].text, what).toMatch(rule)
    }
    // No side effect: the agent is as it was (the out-of-range call also carried a valid greeting).
    const after = (await t.api.get(`/agents/${agentId}`)).body
    expect(after.greeting).toBe(before.greeting)
    expect(after.temperature).toBe(before.temperature)
    expect(after.agent_version).toBe(before.agent_version)
    // An unknown tool is a protocol error, not a tool result (MCP 2025-11-25 tools "Error Handling").
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool/)
    // So is JSON that does not parse.
    const broken = await fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: { ...JSONRPC, authorization: `Bearer ${t.key}`, 'x-forwarded-for': clientIp() },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/call",',
    })
    expect(broken.status).toBe(400)
    expect((await broken.json()).error.code).toBe(-32700)
  })

  it('step-up: an OAuth token without a tool scope gets the 403 challenge, re-authorizes through the SDK client, and the call succeeds', async () => {
    verifies('mcp.step-up', 'mcp.tools.annotations')
    const url = new URL(`${origin}/mcp`)
    const p = new NoRefreshProvider(CB)
    const log: { method: string; status: number; challenge: string | null }[] = []
    const transport = () => new StreamableHTTPClientTransport(url, { authProvider: p, fetch: recordingFetch(log) })

    // First authorization: the person unchecks agents:write on the consent page.
    const first = transport()
    await expect(new Client(info).connect(first)).rejects.toBeInstanceOf(UnauthorizedError)
    const browser = new Browser(origin)
    const back = await browser.approve(p.url!.toString(), t, (s) => s !== 'agents:write')
    await first.finishAuth(back.searchParams.get('code')!)
    const held = p.saved!.scope!.split(' ')
    expect(held).not.toContain('agents:write')
    expect(held).toContain('agents:read')

    const tr = transport()
    const c = new Client(info)
    await c.connect(tr)
    // The tool is listed anyway: a re-authorization can grant it, so the model can ask for it.
    expect((await c.listTools()).tools.map((x) => x.name)).toContain('update_agent')
    const greeting = `Hello from step-up ${Date.now()}`
    await new Promise((r) => setTimeout(r, 200))
    log.length = 0
    await expect(
      c.callTool({ name: 'update_agent', arguments: { agent_id: agentId, greeting } }),
    ).rejects.toBeInstanceOf(UnauthorizedError)
    // The challenge, exactly: the token's scopes plus the missing one, and where the metadata is.
    const wanted = [...held, 'agents:write'].sort().join(' ')
    // (The SDK also tries a GET stream after initialize, answered 405; only the POSTs matter here.)
    expect(log.filter((x) => x.method === 'POST')[0]).toEqual({
      method: 'POST',
      status: 403,
      challenge: `Bearer error="insufficient_scope", scope="${wanted}", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp", error_description="The tool update_agent needs the scope agents:write; authorize again to grant it."`,
    })
    // The tool did not run.
    expect((await t.api.get(`/agents/${agentId}`)).body.greeting).not.toBe(greeting)
    // The SDK client sent the person back to authorize with exactly the challenge's scope; consent offers it all.
    expect(p.url!.searchParams.get('scope')).toBe(wanted)
    const consent = await browser.openAuthorize(p.url!.toString(), t)
    expect(consent.html).toContain('value="agents:write"')
    const again = await browser.decide(consent, 'approve')
    expect(again.status).toBe(302)
    await tr.finishAuth(new URL(again.location!).searchParams.get('code')!)
    expect(p.saved!.scope!.split(' ').sort().join(' ')).toBe(wanted)

    // The same client, the same call: it works now.
    const done = (await c.callTool({ name: 'update_agent', arguments: { agent_id: agentId, greeting } })) as ToolResult
    expect(done.isError, done.content[0]?.text).toBeFalsy()
    expect((await t.api.get(`/agents/${agentId}`)).body.greeting).toBe(greeting)
    await c.close()

    // SDK 1.32.2 with a refresh token: on the 403 it refreshes first (typescript-sdk#2255), a refresh cannot
    // widen the scope (RFC 6749 §6), the retry meets the same challenge and the client gives up. Fixed in
    // the 2.x client (SEP-2350, typescript-sdk#2356); the server's answer is the same either way.
    const keeper = new MemoryProvider(CB)
    const k1 = new StreamableHTTPClientTransport(url, { authProvider: keeper })
    await expect(new Client(info).connect(k1)).rejects.toBeInstanceOf(UnauthorizedError)
    await k1.finishAuth(
      (await new Browser(origin).approve(keeper.url!.toString(), t, (s) => s !== 'agents:write')).searchParams.get(
        'code',
      )!,
    )
    const kc = new Client(info)
    await kc.connect(new StreamableHTTPClientTransport(url, { authProvider: keeper }))
    await expect(kc.callTool({ name: 'update_agent', arguments: { agent_id: agentId, greeting } })).rejects.toThrow(
      /403 after trying upscoping/,
    )
    await kc.close()

    // A personal key cannot be widened by authorizing, so it keeps the tool error (no HTTP 403).
    const narrow = await master.post(`/users/${t.userId}/credentials`, {
      name: 'narrow',
      scopes: ALL_PERSONAL_SCOPES.filter((s) => s !== 'agents:write'),
    })
    const pk = await connectWithKey(narrow.body.secret)
    expect((await pk.listTools()).tools.map((x) => x.name)).not.toContain('update_agent')
    const r = (await pk.callTool({ name: 'update_agent', arguments: { agent_id: agentId, greeting } })) as ToolResult
    expect(r.isError).toBe(true)
    expect(r.structuredContent.error).toMatchObject({ status: 403, code: 'insufficient_scope' })
    await pk.close()
  }, 90_000)

  it('step-up: oauth4webapi reads the 403 as an insufficient_scope challenge naming the scope and the metadata', async () => {
    verifies('mcp.step-up')
    const p = new MemoryProvider(CB)
    const url = new URL(`${origin}/mcp`)
    const first = new StreamableHTTPClientTransport(url, { authProvider: p })
    await expect(new Client(info).connect(first)).rejects.toBeInstanceOf(UnauthorizedError)
    const back = await new Browser(origin).approve(p.url!.toString(), t, (s) => s === 'agents:read')
    await first.finishAuth(back.searchParams.get('code')!)
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'list_conversations', arguments: {} },
    })
    const headers = new Headers({ ...JSONRPC, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION })
    const refused = await oauth
      .protectedResourceRequest(p.saved!.access_token, 'POST', url, headers, body, {
        [oauth.allowInsecureRequests]: true,
      })
      .then(
        () => null,
        (e) => e,
      )
    expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError)
    expect(refused.response.status).toBe(403)
    expect(refused.cause[0].scheme).toBe('bearer')
    expect(refused.cause[0].parameters).toMatchObject({
      error: 'insufficient_scope',
      scope: 'agents:read conversations:read',
      resource_metadata: `${origin}/.well-known/oauth-protected-resource/mcp`,
    })
    const json = await refused.response.json()
    expect(json.error.data).toEqual({ code: 'insufficient_scope', scope: 'agents:read conversations:read' })
    // A tool it holds the scope of still runs.
    const ok = await fetch(url, {
      method: 'POST',
      headers: { ...JSONRPC, authorization: `Bearer ${p.saved!.access_token}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 8,
        method: 'tools/call',
        params: { name: 'list_agents', arguments: {} },
      }),
    })
    expect(ok.status).toBe(200)
    expect((await ok.json()).result.isError).toBeFalsy()
  })

  it('the MCP Inspector (its --cli mode) lists every tool with its title and four annotations', async () => {
    verifies('mcp.inspector')
    const out = await runInspector(`${origin}/mcp`, t.key)
    expect(out.code, out.stderr).toBe(0)
    const tools = JSON.parse(out.stdout).tools as any[]
    expect(tools.map((x) => x.name)).toEqual(TOOL_SPECS.map((s) => s.name))
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeTruthy()
      for (const h of HINTS) expect(tool.annotations[h], `${tool.name}.${h}`).toBeTypeOf('boolean')
    }
    expect(tools.find((x) => x.name === 'place_call').annotations).toMatchObject({
      readOnlyHint: false,
      openWorldHint: true,
    })
  }, 60_000)

  it('initializes at every protocol revision the SDK speaks and serves tools/list at it', async () => {
    verifies('mcp.revisions')
    expect(SUPPORTED_PROTOCOL_VERSIONS).toEqual(['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'])
    const post = (body: unknown, version?: string) =>
      fetch(`${origin}/mcp`, {
        method: 'POST',
        headers: {
          ...JSONRPC,
          authorization: `Bearer ${t.key}`,
          'x-forwarded-for': clientIp(),
          ...(version ? { 'mcp-protocol-version': version } : {}),
        },
        body: JSON.stringify(body),
      })
    const initialize = (protocolVersion: string) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'rev', version: '1' } },
    })
    for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
      const init = await post(initialize(version))
      expect(init.status, version).toBe(200)
      const result = (await init.json()).result
      expect(result.protocolVersion, version).toBe(version)
      expect(result.capabilities.tools, version).toBeDefined()
      const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, version)
      expect(list.status, version).toBe(200)
      expect((await list.json()).result.tools.length, version).toBe(TOOL_SPECS.length)
    }
    // A revision it does not speak: initialize offers the latest; as a header it is refused.
    const future = await post(initialize('2099-01-01'))
    expect((await future.json()).result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION)
    const refused = await post({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, '2099-01-01')
    expect(refused.status).toBe(400)
  })
})
