// The assistant connector end to end, driven only by clients nobody on this team wrote: the MCP SDK's
// Client + StreamableHTTPClientTransport with its own OAuth client provider (discovery from the 401,
// registration, PKCE authorization, token, tools, refresh, and the cut-off after revocation),
// oauth4webapi calling /mcp as a protected resource, and the MCP Inspector CLI with an svc_at_ token.
// The only thing the test does by hand is what a person does: log in and approve the consent form.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, err } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { Browser, MemoryProvider } from '../helpers/oauth'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { runInspector } from '../helpers/inspector'
import { verifies } from '../requirements'

const origin = inject('origin')
const base = inject('base')
const master = createApi(base, inject('masterKey'))
const CB = 'http://127.0.0.1:53682/cb'
const info = { name: 'connector-e2e', version: '1.0.0' }

type ToolResult = { isError?: boolean; structuredContent?: any; content: { type: string; text?: string }[] }

describe('assistant connector end to end (SDK client, oauth4webapi, Inspector CLI)', () => {
  let t: Tenant
  let other: Tenant
  let site: TestSite
  let agentId: string
  let otherAgentId: string

  beforeAll(async () => {
    site = await serveSite({
      '/': {
        body: html(
          'Wombat Windows | Home',
          '<h1>Wombat Windows</h1><p>Wombat Windows cleans shop windows in Geelong.</p><a href="/prices">Prices</a>',
        ),
      },
      '/prices': {
        body: html(
          'Prices | Wombat Windows',
          '<p>A shopfront clean costs $35 per visit.</p><p>We clean every Monday and Thursday morning.</p>',
        ),
      },
    })
    t = await createTenant(master)
    other = await createTenant(master)
    agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    otherAgentId = await buildAgent(other.api, other.accountId, `${site.origin}/`, { language: 'en' })
  }, 120_000)
  afterAll(async () => {
    await site?.close()
  })

  it('SDK client: 401 → discovery → registration → consent → token → tools → chat → refresh → revoke → 401', async () => {
    verifies('mcp.connector', 'oauth.server', 'oauth.access-token')
    const url = new URL(`${origin}/mcp`)
    const p = new MemoryProvider(CB)

    // No token: the 401 challenge sends the client through PRM, AS metadata and DCR to the authorize URL.
    const first = new StreamableHTTPClientTransport(url, { authProvider: p })
    await expect(new Client(info).connect(first)).rejects.toBeInstanceOf(UnauthorizedError)
    expect(p.client?.client_id).toBeTruthy()
    expect(p.url!.origin + p.url!.pathname).toBe(`${origin}/oauth/authorize`)
    expect(p.url!.searchParams.get('code_challenge_method')).toBe('S256')
    expect(p.url!.searchParams.get('resource')).toBe(`${origin}/mcp`)

    // The person logs in and approves; the client redeems the code.
    const back = await new Browser(origin).approve(p.url!.toString(), t)
    expect(back.searchParams.get('iss')).toBe(origin)
    await first.finishAuth(back.searchParams.get('code')!)
    expect(p.saved?.access_token).toMatch(/^svc_at_/)
    expect(p.saved?.refresh_token).toMatch(/^svc_rt_/)

    const client = new Client(info)
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: p }))
    const names = (await client.listTools()).tools.map((x) => x.name)
    expect(names).toEqual(
      expect.arrayContaining(['list_agents', 'start_conversation', 'send_message', 'list_webhook_endpoints']),
    )

    // A tool call that chats with the agent, through the REST routes the tools mirror.
    const agents = (await client.callTool({ name: 'list_agents', arguments: {} })) as ToolResult
    expect(agents.isError).toBeFalsy()
    expect(agents.structuredContent.agents.map((a: any) => a.agent_id)).toEqual([agentId])
    const conv = (await client.callTool({ name: 'start_conversation', arguments: { agent_id: agentId } })) as ToolResult
    expect(conv.isError, conv.content[0]?.text).toBeFalsy()
    const answer = (await client.callTool({
      name: 'send_message',
      arguments: {
        conversation_id: conv.structuredContent.conversation_id,
        text: 'How much does a shopfront clean cost?',
      },
    })) as ToolResult
    expect(answer.isError, answer.content[0]?.text).toBeFalsy()
    expect(answer.structuredContent.turn.text).toContain('$35')
    // The same conversation over REST with the same token: one credential, two surfaces.
    const rest = createApi(base, p.saved!.access_token)
    const read = await rest.get(`/conversations/${conv.structuredContent.conversation_id}`)
    expect(read.status).toBe(200)
    expect(read.body.transcript.some((x: any) => x.speaker === 'agent' && x.text.includes('$35'))).toBe(true)
    // Another tenant's agent is invisible through the connector.
    const foreign = (await client.callTool({ name: 'get_agent', arguments: { agent_id: otherAgentId } })) as ToolResult
    expect(foreign.isError).toBe(true)
    expect(foreign.structuredContent.error.status).toBe(404)

    // Refresh: auth() with a stored refresh token rotates it; the connection keeps working.
    const rt1 = p.saved!.refresh_token!
    expect(await auth(p, { serverUrl: url })).toBe('AUTHORIZED')
    expect(p.saved!.refresh_token).not.toBe(rt1)
    expect((await client.listTools()).tools.length).toBe(names.length)

    // Revoking the refresh token ends the grant: every token of it is refused on /mcp and on REST.
    const at = p.saved!.access_token
    const revoke = await fetch(`${origin}/oauth/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ token: p.saved!.refresh_token!, client_id: p.client!.client_id }),
    })
    expect(revoke.status).toBe(200)
    await expect(client.listTools()).rejects.toBeInstanceOf(UnauthorizedError)
    const afterRevoke = await createApi(base, at).get(`/agents/${agentId}`)
    expect(afterRevoke.status).toBe(401)
    expect(err(afterRevoke).code).toBe('invalid_credentials')
    const raw = await fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${at}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(raw.status).toBe(401)
    expect(raw.headers.get('www-authenticate')).toContain('error="invalid_token"')
    await client.close()
  }, 90_000)

  it('oauth4webapi: /mcp is a protected resource whose challenge names our metadata; tools/list with the token; revoked → invalid_token', async () => {
    verifies('mcp.connector', 'oauth.discovery', 'mcp.step-up')
    const o = { [oauth.allowInsecureRequests]: true }
    const rs = new URL(`${origin}/mcp`)
    const prm = await oauth.processResourceDiscoveryResponse(rs, await oauth.resourceDiscoveryRequest(rs, o))
    expect(prm.resource).toBe(`${origin}/mcp`)
    const issuer = new URL(prm.authorization_servers![0])
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { ...o, algorithm: 'oauth2' }),
    )
    const reg = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [CB], token_endpoint_auth_method: 'none' }, o),
    )
    const client = { client_id: reg.client_id }
    const none = oauth.None()
    const verifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const authz = new URL(as.authorization_endpoint!)
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: CB,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      resource: prm.resource,
      scope: 'agents:read conversations:read',
    }))
      authz.searchParams.set(k, v)
    const callback = await new Browser(origin).approve(authz.toString(), t)
    const params = oauth.validateAuthResponse(as, client, callback, state)
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, none, params, CB, verifier, {
        ...o,
        additionalParameters: { resource: prm.resource },
      }),
    )
    const headers = () =>
      new Headers({
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      })
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    const listed = await oauth.protectedResourceRequest(tokens.access_token, 'POST', rs, headers(), body, o)
    expect(listed.status).toBe(200)
    const tools = (await listed.json()).result.tools.map((x: any) => x.name)
    // Consent kept only agents:read and conversations:read: the list still shows what a re-authorization
    // could grant (step-up, issue 34)...
    expect(tools).toEqual(expect.arrayContaining(['list_agents', 'list_conversations', 'add_knowledge_text']))
    // ...and calling it is HTTP 403 with the insufficient_scope challenge, before the tool runs; REST agrees.
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'add_knowledge_text', arguments: { agent_id: agentId, title: 'x', text: 'Not allowed.' } },
    })
    const denied = await oauth.protectedResourceRequest(tokens.access_token, 'POST', rs, headers(), call, o).then(
      () => null,
      (e) => e,
    )
    expect(denied).toBeInstanceOf(oauth.WWWAuthenticateChallengeError)
    expect(denied.response.status).toBe(403)
    expect(denied.cause[0].parameters).toMatchObject({
      error: 'insufficient_scope',
      scope: 'agents:read conversations:read kb:write',
    })
    const viaRest = await createApi(base, tokens.access_token).post(`/agents/${agentId}/kb/documents`, {
      title: 'x',
      text: 'Not allowed.',
    })
    expect(viaRest.status).toBe(403)
    expect(err(viaRest).code).toBe('insufficient_scope')
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, none, tokens.refresh_token!, o))
    const refused = await oauth.protectedResourceRequest(tokens.access_token, 'POST', rs, headers(), body, o).then(
      () => null,
      (e) => e,
    )
    expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError)
    expect(refused.cause[0].parameters.error).toBe('invalid_token')
  }, 60_000)

  it('the MCP Inspector CLI lists the tools with an OAuth access token', async () => {
    verifies('mcp.connector')
    const p = new MemoryProvider(CB)
    const url = new URL(`${origin}/mcp`)
    expect(await auth(p, { serverUrl: url })).toBe('REDIRECT')
    const back = await new Browser(origin).approve(p.url!.toString(), t)
    expect(await auth(p, { serverUrl: url, authorizationCode: back.searchParams.get('code')! })).toBe('AUTHORIZED')
    const out = await runInspector(`${origin}/mcp`, p.saved!.access_token)
    expect(out.code, out.stderr).toBe(0)
    expect(JSON.parse(out.stdout).tools.map((x: any) => x.name)).toEqual(
      expect.arrayContaining(['list_agents', 'send_message']),
    )
  }, 60_000)
})
