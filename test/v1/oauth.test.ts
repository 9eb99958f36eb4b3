// The OAuth 2.1 authorization server of the assistant connector, over HTTP against the shared server:
// driven by oauth4webapi (a strict third-party client) for the main flow, and by hand for the failures.
import * as oauth from 'oauth4webapi'
import { auth } from '@modelcontextprotocol/sdk/client/auth.js'
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, err, type Api } from '../helpers/api'
import { createTenant, type Tenant } from '../helpers/tenant'
import {
  authorizeUrl,
  Browser,
  MemoryProvider,
  offeredScopes,
  pkce,
  registerClient,
  tokenRequest,
} from '../helpers/oauth'
import { pumpedPost } from '../helpers/pumped-post'
import { verifies } from '../requirements'
import { until } from '../helpers/wait'

const origin = inject('origin')
const base = inject('base')
const master = createApi(base, inject('masterKey'))
const o = { [oauth.allowInsecureRequests]: true }
const CB = 'http://127.0.0.1:53682/cb'

let tenant: Tenant
let other: Tenant

beforeAll(async () => {
  tenant = await createTenant(master)
  other = await createTenant(master)
})

const bearer = (token: string) => createApi(base, token)
const DEFAULT_SCOPES = ['agents:read', 'kb:read', 'conversations:read', 'summaries:read', 'metrics:read']

/** Register → authorize (PKCE, state, resource) → log in and approve over HTTP → exchange the code. */
async function connect(opts: { keep?: (s: string) => boolean; scope?: string; who?: Tenant; resource?: string } = {}) {
  const reg = await registerClient(origin, {
    redirect_uris: [CB],
    token_endpoint_auth_method: 'none',
    client_name: 'e2e',
  })
  expect(reg.status).toBe(201)
  const { verifier, challenge } = pkce()
  const browser = new Browser(origin)
  const back = await browser.approve(
    authorizeUrl(origin, {
      clientId: reg.body.client_id,
      redirectUri: CB,
      challenge,
      method: 'S256',
      state: 's1',
      scope: opts.scope,
      resource: opts.resource ?? `${origin}/mcp`,
    }),
    opts.who ?? tenant,
    opts.keep,
  )
  const t = await tokenRequest(origin, {
    grant_type: 'authorization_code',
    code: back.searchParams.get('code')!,
    code_verifier: verifier,
    redirect_uri: CB,
    client_id: reg.body.client_id,
    resource: opts.resource ?? `${origin}/mcp`,
  })
  expect(t.status).toBe(200)
  return {
    clientId: reg.body.client_id as string,
    tokens: t.body as { access_token: string; refresh_token: string; scope: string; expires_in: number },
    browser,
  }
}

describe('discovery', () => {
  it('serves RFC 8414 metadata whose issuer is the origin string, byte-identical to the PRM authorization server', async () => {
    verifies('oauth.discovery')
    const as = await fetch(`${origin}/.well-known/oauth-authorization-server`).then((r) => r.json())
    expect(as.issuer).toBe(origin)
    expect(as).toMatchObject({
      authorization_endpoint: `${origin}/oauth/authorize`,
      token_endpoint: `${origin}/oauth/token`,
      registration_endpoint: `${origin}/oauth/register`,
      revocation_endpoint: `${origin}/oauth/revoke`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      authorization_response_iss_parameter_supported: true,
      token_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    })
    expect(as.scopes_supported).not.toContain('offline_access')
    expect(as.scopes_supported).not.toContain('users:manage')
    for (const [path, resource] of [
      ['/mcp', `${origin}/mcp`],
      ['/v1/mcp', `${origin}/v1/mcp`],
      ['', `${origin}/mcp`],
    ]) {
      const r = await fetch(`${origin}/.well-known/oauth-protected-resource${path}`)
      expect(r.status, path).toBe(200)
      const prm = await r.json()
      expect(prm.resource).toBe(resource)
      expect(prm.authorization_servers).toEqual([as.issuer])
      expect(prm.bearer_methods_supported).toEqual(['header'])
      expect(prm.scopes_supported).not.toContain('offline_access')
    }
  })

  it('has no openid-configuration (a partial OIDC document breaks MCP clients)', async () => {
    verifies('oauth.discovery')
    expect((await fetch(`${origin}/.well-known/openid-configuration`)).status).toBe(404)
  })
})

describe('the whole flow with oauth4webapi', () => {
  it('PRM → AS metadata → DCR → authorize with PKCE → consent → code → token → REST → refresh → revoke', async () => {
    verifies('oauth.server', 'oauth.discovery', 'oauth.access-token', 'oauth.connection')
    const rs = new URL(`${origin}/mcp`)
    const prm = await oauth.processResourceDiscoveryResponse(rs, await oauth.resourceDiscoveryRequest(rs, o))
    const issuer = new URL(prm.authorization_servers![0])
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { ...o, algorithm: 'oauth2' }),
    )
    const reg = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          redirect_uris: [CB],
          token_endpoint_auth_method: 'none',
          client_name: 'oauth4webapi e2e',
          application_type: 'native',
          scope: '',
        } as any,
        o,
      ),
    )
    expect(reg.client_secret).toBeUndefined()
    const client: oauth.Client = { client_id: reg.client_id }
    const none = oauth.None()
    const verifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const url = new URL(as.authorization_endpoint!)
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: CB,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      scope: 'accounts:read agents:read offline_access',
      resource: prm.resource,
    }))
      url.searchParams.set(k, v)
    const browser = new Browser(origin)
    const consent = await browser.openAuthorize(url.toString(), tenant)
    expect(consent.html).toContain('oauth4webapi e2e')
    expect(consent.html).toContain('127.0.0.1:53682')
    expect(offeredScopes(consent.html)).toEqual(['accounts:read', 'agents:read']) // offline_access is not ours: ignored
    const callback = new URL((await browser.decide(consent, 'approve')).location!)
    expect(callback.searchParams.get('iss')).toBe(origin)
    const params = oauth.validateAuthResponse(as, client, callback, state)
    const t = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, none, params, CB, verifier, {
        ...o,
        additionalParameters: { resource: prm.resource },
      }),
    )
    expect(t.access_token).toMatch(/^svc_at_[A-Za-z0-9_-]{43}$/)
    expect(t.refresh_token).toMatch(/^svc_rt_[A-Za-z0-9_-]{43}$/)
    expect(t.token_type).toBe('bearer')
    expect(t.expires_in).toBe(3600)
    expect(t.scope).toBe('accounts:read agents:read')

    // The token acts as the connection's key on the REST API.
    const r = await bearer(t.access_token).get(`/accounts/${tenant.accountId}`)
    expect(r.status).toBe(200)
    expect(r.body.account_id).toBe(tenant.accountId)
    expect((await bearer(t.access_token).get(`/accounts/${tenant.accountId}/agents`)).status).toBe(200)

    // Refresh rotates; the rotated token presented again within 30 s mints another pair in the same grant.
    const t2 = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, none, t.refresh_token!, o),
    )
    expect(t2.refresh_token).not.toBe(t.refresh_token)
    expect(t2.access_token).not.toBe(t.access_token)
    expect((await bearer(t2.access_token).get(`/accounts/${tenant.accountId}`)).status).toBe(200)
    const t3 = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, none, t.refresh_token!, o),
    )
    expect(t3.refresh_token).not.toBe(t2.refresh_token)
    expect((await bearer(t3.access_token).get(`/accounts/${tenant.accountId}`)).status).toBe(200)

    // Revoking a refresh token ends the grant: every token of it is 401 invalid_credentials.
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, none, t2.refresh_token!, o))
    for (const at of [t.access_token, t2.access_token, t3.access_token]) {
      const after = await bearer(at).get(`/accounts/${tenant.accountId}`)
      expect(after.status).toBe(401)
      expect(err(after).code).toBe('invalid_credentials')
    }
    await expect(
      oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, none, t3.refresh_token!, o),
      ),
    ).rejects.toMatchObject({ error: 'invalid_grant', status: 400 })
    // Revoking an unknown token is still 200 (RFC 7009).
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, none, 'svc_rt_' + 'x'.repeat(43), o),
    )
  })

  it("records the token's requests in the audit log as its key, typed oauth", async () => {
    verifies('oauth.access-token')
    const { tokens, clientId } = await connect({ scope: 'accounts:read' })
    const conns = await tenantSessionApi(tenant).get('/api/oauth/connections')
    const keyId = conns.body.data.find((c: any) => c.client_id === clientId).key_id as string
    expect((await bearer(tokens.access_token).get(`/accounts/${tenant.accountId}`)).status).toBe(200)
    const rows: any[] = await until(
      'the audit row of the OAuth request',
      async () => {
        const data = (await master.get(`/audit?credential_id=${keyId}`)).body.data ?? []
        return data.length > 0 && data
      },
      10_000,
    )
    expect(rows[0]).toMatchObject({ credential_type: 'oauth', credential_id: keyId, status_code: 200 })
  })
})

const sessions = new Map<string, Api>()
function tenantSessionApi(t: Tenant): Api {
  return (
    sessions.get(t.userId) ??
    (() => {
      const wrapped: Api = {
        ...createApi(origin),
        request: async (method, path, opts = {}) => {
          const login = await createApi(origin).post('/api/auth/login', { email: t.email, password: t.password })
          return createApi(origin).request(method, path, {
            ...opts,
            headers: { ...(opts.headers ?? {}), authorization: `Session ${login.body.session_token}` },
          })
        },
      } as Api
      wrapped.get = (p, op) => wrapped.request('GET', p, op)
      wrapped.delete = (p, op) => wrapped.request('DELETE', p, op)
      sessions.set(t.userId, wrapped)
      return wrapped
    })()
  )
}

// The MCP SDK's own OAuth client (what Claude Code and most MCP clients embed): discovery from the /mcp
// URL, DCR parsed with its schemas, PKCE, resource, the code exchange and a refresh.
describe('the MCP SDK client', () => {
  it('discovers, registers, authorizes with PKCE and resource, exchanges the code and refreshes', async () => {
    verifies('oauth.server', 'oauth.discovery')
    const p = new MemoryProvider(CB, 'sdk-state')
    const serverUrl = `${origin}/mcp`
    expect(await auth(p, { serverUrl })).toBe('REDIRECT')
    expect(p.url!.searchParams.get('resource')).toBe(serverUrl)
    expect(p.url!.searchParams.get('code_challenge_method')).toBe('S256')
    const back = await new Browser(origin).approve(
      p.url!.toString(),
      tenant,
      (s) => s === 'accounts:read' || s === 'agents:read',
    )
    expect(back.searchParams.get('state')).toBe('sdk-state')
    expect(await auth(p, { serverUrl, authorizationCode: back.searchParams.get('code')! })).toBe('AUTHORIZED')
    expect((await bearer(p.saved!.access_token).get(`/accounts/${tenant.accountId}`)).status).toBe(200)
    const first = p.saved!.refresh_token
    expect(await auth(p, { serverUrl })).toBe('AUTHORIZED')
    expect(p.saved!.refresh_token).not.toBe(first)
    expect((await bearer(p.saved!.access_token).get(`/accounts/${tenant.accountId}`)).status).toBe(200)
  })
})

describe('registration endpoint', () => {
  it('a chunked body over 2 MB is 413 payload_too_large, not invalid_client_metadata', async () => {
    verifies('errors.payload_too_large')
    // No Content-Length: the cap is met while reading, inside the route (the lazy body of middleware 02).
    const big = Buffer.from(JSON.stringify({ redirect_uris: [CB], client_name: 'x'.repeat(2_200_000) }))
    const r = await pumpedPost(`${origin}/oauth/register`, { 'content-type': 'application/json' }, big)
    expect(r.status).toBe(413)
    expect(JSON.parse(r.body).error.code).toBe('payload_too_large')
  })
})

describe('authorization endpoint', () => {
  let clientId: string
  beforeAll(async () => {
    clientId = (
      await registerClient(origin, {
        redirect_uris: [CB, 'https://app.example/cb'],
        token_endpoint_auth_method: 'none',
        client_name: '<b>Evil</b> & co',
      })
    ).body.client_id
  })

  it('never redirects for an unknown client or an unregistered redirect_uri: 400 page', async () => {
    verifies('oauth.server')
    const { challenge } = pkce()
    const b = new Browser(origin)
    for (const url of [
      authorizeUrl(origin, { clientId: 'svc_oc_unknown', redirectUri: CB, challenge, method: 'S256' }),
      authorizeUrl(origin, { clientId, redirectUri: 'https://attacker.example/cb', challenge, method: 'S256' }),
      authorizeUrl(origin, { clientId, redirectUri: 'http://127.0.0.1:53682/other', challenge, method: 'S256' }),
    ]) {
      const page = await b.request('GET', url)
      expect(page.status, url).toBe(400)
      expect(page.location).toBeNull()
      expect(page.headers.get('content-type')).toContain('text/html')
    }
  })

  it('accepts a loopback redirect_uri on any port, and asks an anonymous browser to log in', async () => {
    verifies('oauth.server')
    const { challenge } = pkce()
    const page = await new Browser(origin).request(
      'GET',
      authorizeUrl(origin, { clientId, redirectUri: 'http://127.0.0.1:7777/cb', challenge, method: 'S256' }),
    )
    expect(page.status).toBe(200)
    expect(page.html).toContain('action="/oauth/login"')
    expect(page.headers.get('x-frame-options')).toBe('DENY')
  })

  it('refuses missing or plain PKCE, a foreign resource and other response types by redirect with state and iss', async () => {
    verifies('oauth.server')
    const { challenge } = pkce()
    const b = new Browser(origin)
    const cases: [Parameters<typeof authorizeUrl>[1], string][] = [
      [{ clientId, redirectUri: CB, state: 'x' }, 'invalid_request'],
      [{ clientId, redirectUri: CB, state: 'x', challenge, method: 'plain' }, 'invalid_request'],
      [{ clientId, redirectUri: CB, state: 'x', challenge }, 'invalid_request'],
      [{ clientId, redirectUri: CB, state: 'x', challenge: 'short', method: 'S256' }, 'invalid_request'],
      [
        { clientId, redirectUri: CB, state: 'x', challenge, method: 'S256', resource: 'https://elsewhere.example/mcp' },
        'invalid_target',
      ],
      [
        { clientId, redirectUri: CB, state: 'x', challenge, method: 'S256', resource: `${origin}/v1/agents` },
        'invalid_target',
      ],
      [
        { clientId, redirectUri: CB, state: 'x', challenge, method: 'S256', extra: { response_type: 'token' } },
        'unsupported_response_type',
      ],
    ]
    for (const [p, code] of cases) {
      const page = await b.request('GET', authorizeUrl(origin, p))
      expect(page.status).toBe(302)
      const loc = new URL(page.location!)
      expect(`${loc.origin}${loc.pathname}`).toBe(CB)
      expect(loc.searchParams.get('error'), JSON.stringify(p)).toBe(code)
      expect(loc.searchParams.get('state')).toBe('x')
      expect(loc.searchParams.get('iss')).toBe(origin)
    }
  })

  it('shows the client name escaped and the redirect host; deny answers access_denied', async () => {
    verifies('oauth.server')
    const { challenge } = pkce()
    const b = new Browser(origin)
    const consent = await b.openAuthorize(
      authorizeUrl(origin, { clientId, redirectUri: 'https://app.example/cb', challenge, method: 'S256', state: 'st' }),
      tenant,
    )
    expect(consent.status).toBe(200)
    expect(consent.html).toContain('&lt;b&gt;Evil&lt;/b&gt; &amp; co')
    expect(consent.html).not.toContain('<b>Evil</b>')
    expect(consent.html).toContain('app.example')
    expect(consent.html).toContain(tenant.accountId)
    // No scope requested: the read-only default is offered, never a master-only or credential scope.
    expect(offeredScopes(consent.html)).toEqual(DEFAULT_SCOPES)
    const denied = await b.decide(consent, 'deny')
    expect(denied.status).toBe(302)
    const loc = new URL(denied.location!)
    expect(loc.host).toBe('app.example')
    expect(loc.searchParams.get('error')).toBe('access_denied')
    expect(loc.searchParams.get('state')).toBe('st')
    expect(loc.searchParams.get('iss')).toBe(origin)
  })

  it('refuses a consent form that was not issued to the logged-in user, or was tampered with', async () => {
    verifies('oauth.server')
    const { challenge } = pkce()
    const url = authorizeUrl(origin, { clientId, redirectUri: CB, challenge, method: 'S256' })
    const mine = await new Browser(origin).openAuthorize(url, tenant)
    const theirs = new Browser(origin)
    await theirs.openAuthorize(url, other)
    const stolen = await theirs.decide(mine, 'approve')
    expect(stolen.status).toBe(400)
    expect(stolen.location).toBeNull()
    const b = new Browser(origin)
    const consent = await b.openAuthorize(url, tenant)
    const tampered = await b.request(
      'POST',
      '/oauth/authorize',
      new URLSearchParams({ request_id: 'e30.' + 'A'.repeat(43), decision: 'approve', scope: 'kb:read' }),
    )
    expect(tampered.status).toBe(400)
    expect(consent.status).toBe(200)
    // Without a session the decision is refused too.
    const anon = await new Browser(origin).decide(consent, 'approve')
    expect(anon.status).toBe(401)
  })

  it('shows the login form again, unredirected, after a wrong password', async () => {
    verifies('oauth.server')
    const { challenge } = pkce()
    const b = new Browser(origin)
    const url = authorizeUrl(origin, { clientId, redirectUri: CB, challenge, method: 'S256' })
    const form = b.loginForm(await b.request('GET', url), { email: tenant.email, password: 'wrong-password' })
    const bad = await b.request('POST', '/oauth/login', form)
    expect(bad.status).toBe(401)
    expect(bad.html).toContain('action="/oauth/login"')
    form.set('password', tenant.password)
    form.set('return_to', 'https://evil.example/')
    const open = await b.request('POST', '/oauth/login', form)
    expect(open.status).toBe(400)
    expect(open.location).toBeNull()
  })
})

describe('token endpoint', () => {
  it('refuses a wrong PKCE verifier, another redirect_uri and a foreign resource; the code stays single-use', async () => {
    verifies('oauth.server')
    const reg = await registerClient(origin, { redirect_uris: [CB], token_endpoint_auth_method: 'none' })
    const id = reg.body.client_id
    const { verifier, challenge } = pkce()
    const back = await new Browser(origin).approve(
      authorizeUrl(origin, { clientId: id, redirectUri: CB, challenge, method: 'S256' }),
      tenant,
    )
    const code = back.searchParams.get('code')!
    const wrongVerifier = await tokenRequest(origin, {
      grant_type: 'authorization_code',
      code,
      code_verifier: pkce().verifier,
      redirect_uri: CB,
      client_id: id,
    })
    expect(wrongVerifier.status).toBe(400)
    expect(wrongVerifier.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) })
    expect(wrongVerifier.headers.get('cache-control')).toBe('no-store')
    // The failed attempt spent the code.
    const after = await tokenRequest(origin, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: CB,
      client_id: id,
    })
    expect(after.body.error).toBe('invalid_grant')

    const p2 = pkce()
    const back2 = await new Browser(origin).approve(
      authorizeUrl(origin, { clientId: id, redirectUri: CB, challenge: p2.challenge, method: 'S256' }),
      tenant,
    )
    const missing = await tokenRequest(origin, {
      grant_type: 'authorization_code',
      code: back2.searchParams.get('code')!,
      redirect_uri: CB,
      client_id: id,
    })
    expect(missing.body.error).toBe('invalid_request')
    const wrongRedirect = await tokenRequest(origin, {
      grant_type: 'authorization_code',
      code: back2.searchParams.get('code')!,
      code_verifier: p2.verifier,
      redirect_uri: 'http://127.0.0.1:53682/other',
      client_id: id,
    })
    expect(wrongRedirect.body.error).toBe('invalid_grant')

    const p3 = pkce()
    const back3 = await new Browser(origin).approve(
      authorizeUrl(origin, { clientId: id, redirectUri: CB, challenge: p3.challenge, method: 'S256' }),
      tenant,
    )
    const foreign = await tokenRequest(origin, {
      grant_type: 'authorization_code',
      code: back3.searchParams.get('code')!,
      code_verifier: p3.verifier,
      redirect_uri: CB,
      client_id: id,
      resource: 'https://elsewhere.example/mcp',
    })
    expect(foreign.body.error).toBe('invalid_target')
  })

  it('a replayed code is invalid_grant and revokes the tokens it issued', async () => {
    verifies('oauth.server')
    const reg = await registerClient(origin, { redirect_uris: [CB], token_endpoint_auth_method: 'none' })
    const id = reg.body.client_id
    const { verifier, challenge } = pkce()
    const back = await new Browser(origin).approve(
      authorizeUrl(origin, { clientId: id, redirectUri: CB, challenge, method: 'S256', scope: 'accounts:read' }),
      tenant,
    )
    const form = {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      code_verifier: verifier,
      redirect_uri: CB,
      client_id: id,
    }
    const first = await tokenRequest(origin, form)
    expect(first.status).toBe(200)
    expect((await bearer(first.body.access_token).get(`/accounts/${tenant.accountId}`)).status).toBe(200)
    const replay = await tokenRequest(origin, form)
    expect(replay.status).toBe(400)
    expect(replay.body.error).toBe('invalid_grant')
    const r = await bearer(first.body.access_token).get(`/accounts/${tenant.accountId}`)
    expect(r.status).toBe(401)
    expect(err(r).code).toBe('invalid_credentials')
    expect(
      (
        await tokenRequest(origin, {
          grant_type: 'refresh_token',
          refresh_token: first.body.refresh_token,
          client_id: id,
        })
      ).body.error,
    ).toBe('invalid_grant')
  })

  it('a resource with a trailing slash or upper-case host is canonicalised', async () => {
    verifies('oauth.server')
    const { tokens } = await connect({
      scope: 'accounts:read',
      resource: `${origin.replace('http://', 'HTTP://')}/mcp/`,
    })
    expect((await bearer(tokens.access_token).get(`/accounts/${tenant.accountId}`)).status).toBe(200)
  })

  it('client_credentials and unknown grant types are unsupported_grant_type; unknown clients are 401 invalid_client', async () => {
    verifies('oauth.server')
    const reg = await registerClient(origin, { redirect_uris: [CB], token_endpoint_auth_method: 'none' })
    for (const gt of ['client_credentials', 'password', 'urn:ietf:params:oauth:grant-type:device_code']) {
      const r = await tokenRequest(origin, { grant_type: gt, client_id: reg.body.client_id })
      expect(r.status).toBe(400)
      expect(r.body.error).toBe('unsupported_grant_type')
    }
    const unknown = await tokenRequest(origin, {
      grant_type: 'authorization_code',
      code: 'x',
      client_id: 'svc_oc_nobody',
    })
    expect(unknown.status).toBe(401)
    expect(unknown.body.error).toBe('invalid_client')
    const noClient = await tokenRequest(origin, { grant_type: 'authorization_code', code: 'x' })
    expect(noClient.status).toBe(401)
    // A public client that presents a secret is not who it says.
    const withSecret = await tokenRequest(origin, {
      grant_type: 'refresh_token',
      refresh_token: 'x',
      client_id: reg.body.client_id,
      client_secret: 'guess',
    })
    expect(withSecret.body.error).toBe('invalid_client')
    const notForm = await fetch(`${origin}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    expect(notForm.status).toBe(400)
    expect((await notForm.json()).error).toBe('invalid_request')
  })

  it('issues and checks secrets for client_secret_post and client_secret_basic clients', async () => {
    verifies('oauth.server')
    for (const method of ['client_secret_post', 'client_secret_basic'] as const) {
      const reg = await registerClient(origin, {
        redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
        token_endpoint_auth_method: method,
        client_name: 'Claude',
      })
      expect(reg.status).toBe(201)
      expect(reg.body).toMatchObject({ token_endpoint_auth_method: method, client_secret_expires_at: 0 })
      expect(reg.body.client_secret).toMatch(/^svc_cs_/)
      const as = await oauth.processDiscoveryResponse(
        new URL(origin),
        await oauth.discoveryRequest(new URL(origin), { ...o, algorithm: 'oauth2' }),
      )
      const client: oauth.Client = { client_id: reg.body.client_id }
      const auth =
        method === 'client_secret_post'
          ? oauth.ClientSecretPost(reg.body.client_secret)
          : oauth.ClientSecretBasic(reg.body.client_secret)
      const { verifier, challenge } = pkce()
      const back = await new Browser(origin).approve(
        authorizeUrl(origin, {
          clientId: client.client_id,
          redirectUri: 'https://claude.ai/api/mcp/auth_callback',
          challenge,
          method: 'S256',
          state: 'c',
          scope: 'accounts:read',
        }),
        tenant,
      )
      const params = oauth.validateAuthResponse(as, client, back, 'c')
      const t = await oauth.processAuthorizationCodeResponse(
        as,
        client,
        await oauth.authorizationCodeGrantRequest(
          as,
          client,
          auth,
          params,
          'https://claude.ai/api/mcp/auth_callback',
          verifier,
          o,
        ),
      )
      expect((await bearer(t.access_token).get(`/accounts/${tenant.accountId}`)).status).toBe(200)
      // Wrong secret, or none at all: 401 invalid_client.
      const wrong =
        method === 'client_secret_post'
          ? oauth.ClientSecretPost('svc_cs_wrong')
          : oauth.ClientSecretBasic('svc_cs_wrong')
      // (oauth4webapi reports the Basic challenge of a 401 as a WWW-Authenticate error; the body is checked below.)
      await expect(
        oauth.processRefreshTokenResponse(
          as,
          client,
          await oauth.refreshTokenGrantRequest(as, client, wrong, t.refresh_token!, o),
        ),
      ).rejects.toMatchObject({ status: 401 })
      const raw = await oauth.refreshTokenGrantRequest(as, client, wrong, t.refresh_token!, o)
      expect(raw.status).toBe(401)
      expect((await raw.json()).error).toBe('invalid_client')
      await expect(
        oauth.processRefreshTokenResponse(
          as,
          client,
          await oauth.refreshTokenGrantRequest(as, client, oauth.None(), t.refresh_token!, o),
        ),
      ).rejects.toMatchObject({ error: 'invalid_client', status: 401 })
      const t2 = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, auth, t.refresh_token!, o),
      )
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, t2.refresh_token!, o))
      expect((await bearer(t2.access_token).get(`/accounts/${tenant.accountId}`)).status).toBe(401)
    }
  })

  it('a token of another client cannot be refreshed or revoked by it', async () => {
    verifies('oauth.server')
    const { tokens } = await connect({ scope: 'accounts:read' })
    const intruder = (await registerClient(origin, { redirect_uris: [CB], token_endpoint_auth_method: 'none' })).body
      .client_id
    expect(
      (
        await tokenRequest(origin, {
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: intruder,
        })
      ).body.error,
    ).toBe('invalid_grant')
    const rev = await fetch(`${origin}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.refresh_token, client_id: intruder }).toString(),
    })
    expect(rev.status).toBe(400)
    expect((await bearer(tokens.access_token).get(`/accounts/${tenant.accountId}`)).status).toBe(200)
  })
})

describe('what a token may do', () => {
  it('scopes the user unchecked are not granted: a kb write is 403 insufficient_scope', async () => {
    verifies('oauth.connection', 'oauth.access-token')
    const { tokens } = await connect({ scope: 'kb:read kb:write agents:read', keep: (s) => s !== 'kb:write' })
    expect(tokens.scope).toBe('kb:read agents:read')
    const api = bearer(tokens.access_token)
    const write = await api.post('/agents/agt_999999/kb/documents', { text: 'x', title: 'x' })
    expect(write.status).toBe(403)
    expect(err(write).code).toBe('insufficient_scope')
    const read = await api.get('/agents/agt_999999/kb/documents')
    expect(read.status).toBe(404)
  })

  it("acts only for the user's home account: another tenant's resources stay 404", async () => {
    verifies('oauth.access-token', 'tenancy.isolation')
    const { tokens } = await connect({ scope: 'accounts:read agents:read conversations:read' })
    const api = bearer(tokens.access_token)
    expect((await api.get(`/accounts/${other.accountId}`)).status).toBe(404)
    const agents = await api.get(`/accounts/${other.accountId}/agents`)
    expect(agents.status).toBe(404)
    expect((await api.get('/conversations')).status).toBe(200)
    const forced = await api.get('/conversations', { headers: { 'x-svc-account': other.accountId } })
    expect(forced.status).toBe(403)
    expect(err(forced).code).toBe('forbidden_account')
  })

  it('revoking the connection key kills its tokens at once', async () => {
    verifies('oauth.connection', 'oauth.access-token')
    const { tokens, clientId } = await connect({ scope: 'accounts:read' })
    const conn = (await tenantSessionApi(tenant).get('/api/oauth/connections')).body.data.find(
      (c: any) => c.client_id === clientId,
    )
    expect((await tenant.api.delete(`/credentials/${conn.key_id}`)).status).toBe(204)
    const r = await bearer(tokens.access_token).get(`/accounts/${tenant.accountId}`)
    expect(r.status).toBe(401)
    expect(err(r).code).toBe('invalid_credentials')
    expect(
      (
        await tokenRequest(origin, {
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: clientId,
        })
      ).body.error,
    ).toBe('invalid_grant')
    // The dashboard no longer lists a connection whose key is gone.
    expect(
      (await tenantSessionApi(tenant).get('/api/oauth/connections')).body.data.find(
        (c: any) => c.connection_id === conn.connection_id,
      ),
    ).toBeUndefined()
  })
})

describe('dashboard connections', () => {
  it("lists my connections and disconnecting kills every token and the key; another user's is 404", async () => {
    verifies('oauth.connection', 'oauth.access-token')
    const { tokens, clientId } = await connect({ scope: 'accounts:read agents:read' })
    const dash = tenantSessionApi(tenant)
    const list = await dash.get('/api/oauth/connections')
    expect(list.status).toBe(200)
    const conn = list.body.data.find((c: any) => c.client_id === clientId)
    expect(conn).toMatchObject({
      connection_id: expect.stringMatching(/^ocn_\d+$/),
      client_name: 'e2e',
      redirect_hosts: ['127.0.0.1:53682'],
      scopes: ['accounts:read', 'agents:read'],
      resource: `${origin}/mcp`,
      account_id: tenant.accountId,
    })
    const keys = await dash.get('/api/api-keys')
    expect(keys.body.data.find((k: any) => k.key_id === conn.key_id)).toMatchObject({
      status: 'active',
      scopes: ['accounts:read', 'agents:read'],
    })

    expect((await tenantSessionApi(other).delete(`/api/oauth/connections/${conn.connection_id}`)).status).toBe(404)
    expect(
      (await tenantSessionApi(other).get('/api/oauth/connections')).body.data.find(
        (c: any) => c.connection_id === conn.connection_id,
      ),
    ).toBeUndefined()
    // An API key (or the token itself) is not a dashboard credential.
    expect((await createApi(origin, tokens.access_token).get('/api/oauth/connections')).status).toBe(401)

    expect((await dash.delete(`/api/oauth/connections/${conn.connection_id}`)).status).toBe(204)
    expect((await dash.delete(`/api/oauth/connections/${conn.connection_id}`)).status).toBe(204)
    const r = await bearer(tokens.access_token).get(`/accounts/${tenant.accountId}`)
    expect(r.status).toBe(401)
    expect(err(r).code).toBe('invalid_credentials')
    expect(
      (
        await tokenRequest(origin, {
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: clientId,
        })
      ).body.error,
    ).toBe('invalid_grant')
    expect(
      (await dash.get('/api/oauth/connections')).body.data.find((c: any) => c.connection_id === conn.connection_id),
    ).toBeUndefined()
    expect((await dash.get('/api/api-keys')).body.data.find((k: any) => k.key_id === conn.key_id).status).toBe(
      'revoked',
    )
    expect((await dash.delete('/api/oauth/connections/bogus')).status).toBe(400)
  })
})

describe('registration', () => {
  it('answers 201 echoing the metadata it kept, ignoring unknown fields and dropping unsupported grant types', async () => {
    verifies('oauth.server')
    const r = await registerClient(origin, {
      redirect_uris: ['http://127.0.0.1:6276/oauth/callback'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
      response_types: ['code'],
      client_name: 'MCP Inspector',
      client_uri: 'https://github.com/modelcontextprotocol/inspector',
      scope: 'mcp',
      application_type: 'native',
      contacts: ['a@example.com'],
      jwks: { keys: [] },
      software_statement: 'x',
    })
    expect(r.status).toBe(201)
    expect(r.headers.get('cache-control')).toBe('no-store')
    expect(r.body).toMatchObject({
      client_id: expect.stringMatching(/^svc_oc_/),
      client_id_issued_at: expect.any(Number),
      redirect_uris: ['http://127.0.0.1:6276/oauth/callback'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      client_name: 'MCP Inspector',
      client_uri: 'https://github.com/modelcontextprotocol/inspector',
      scope: 'mcp',
      application_type: 'native',
    })
    expect(r.body.client_secret).toBeUndefined()
    expect(r.body.contacts).toBeUndefined()
    // The RFC 7591 default method is client_secret_basic, with a secret.
    const dflt = await registerClient(origin, { redirect_uris: ['https://app.example/cb'] })
    expect(dflt.body).toMatchObject({
      token_endpoint_auth_method: 'client_secret_basic',
      client_secret_expires_at: 0,
      client_secret: expect.stringMatching(/^svc_cs_/),
    })
  })

  it('refuses bad redirect URIs and metadata in RFC 7591 form', async () => {
    verifies('oauth.server')
    const cases: [unknown, string][] = [
      [{}, 'invalid_redirect_uri'],
      [{ redirect_uris: [] }, 'invalid_redirect_uri'],
      [{ redirect_uris: 'https://a.example/cb' }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['http://app.example/cb'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://app.example/cb#frag'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['not a uri'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://a.example/cb'], response_types: ['token'] }, 'invalid_client_metadata'],
      [{ redirect_uris: ['https://a.example/cb'], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
      [
        { redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'private_key_jwt' },
        'invalid_client_metadata',
      ],
      [{ redirect_uris: ['https://a.example/cb'], client_uri: 'javascript:alert(1)' }, 'invalid_client_metadata'],
    ]
    for (const [body, code] of cases) {
      const r = await registerClient(origin, body as Record<string, unknown>)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.error, JSON.stringify(body)).toBe(code)
      expect(r.body.error_description).toEqual(expect.any(String))
    }
    const notJson = await fetch(`${origin}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{nope',
    })
    expect(notJson.status).toBe(400)
    expect((await notJson.json()).error).toBe('invalid_client_metadata')
  })

  it('never redirects an OAuth POST with a trailing slash (a redirect would turn it into a GET and drop the body)', async () => {
    verifies('oauth.server')
    const r = await fetch(`${origin}/oauth/register/`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.251' },
      body: JSON.stringify({ redirect_uris: [CB], token_endpoint_auth_method: 'none' }),
    })
    expect(r.status).toBe(201)
    const t = await fetch(`${origin}/oauth/token/`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=svc_oc_nobody',
    })
    expect(t.status).toBe(401)
    expect((await t.json()).error).toBe('invalid_client')
  })

  it('serves the same endpoints under /v1/oauth', async () => {
    verifies('oauth.server')
    const r = await fetch(`${origin}/v1/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [CB], token_endpoint_auth_method: 'none' }),
    })
    expect(r.status).toBe(201)
    const id = (await r.json()).client_id
    const t = await fetch(`${origin}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&client_id=${id}`,
    })
    expect((await t.json()).error).toBe('unsupported_grant_type')
    const page = await new Browser(origin).request(
      'GET',
      authorizeUrl(origin, { clientId: 'svc_oc_unknown', redirectUri: CB }).replace('/oauth/', '/v1/oauth/'),
    )
    expect(page.status).toBe(400)
  })
})

describe('connection scopes (issue 12)', () => {
  let clientId: string
  beforeAll(async () => {
    clientId = (
      await registerClient(origin, { redirect_uris: [CB], token_endpoint_auth_method: 'none', client_name: 'scopes' })
    ).body.client_id
  })
  const consentFor = (scope?: string) =>
    new Browser(origin).openAuthorize(
      authorizeUrl(origin, {
        clientId,
        redirectUri: CB,
        challenge: pkce().challenge,
        method: 'S256',
        state: 'sc',
        scope,
      }),
      tenant,
    )

  it('a request without scope (or with none of ours) gets the read-only default, and the token says so', async () => {
    verifies('oauth.default-scopes')
    for (const scope of [undefined, '', 'mcp offline_access'])
      expect(offeredScopes((await consentFor(scope)).html), String(scope)).toEqual(DEFAULT_SCOPES)
    const { tokens } = await connect()
    expect(tokens.scope).toBe(DEFAULT_SCOPES.join(' '))
    const api = bearer(tokens.access_token)
    expect((await api.get('/conversations')).status).toBe(200)
    const write = await api.post('/agents/agt_999999/kb/documents', { text: 'x', title: 'x' })
    expect(write.status).toBe(403)
    expect(err(write).code).toBe('insufficient_scope')
  })

  it('never offers or grants credentials:manage or partners:manage: dropped beside other scopes, invalid_scope alone', async () => {
    verifies('oauth.default-scopes')
    expect(offeredScopes((await consentFor('credentials:manage agents:read partners:manage')).html)).toEqual([
      'agents:read',
    ])
    const { tokens } = await connect({ scope: 'agents:read credentials:manage' })
    expect(tokens.scope).toBe('agents:read')
    for (const scope of ['credentials:manage', 'credentials:manage partners:manage offline_access', 'users:manage']) {
      const page = await consentFor(scope)
      expect(page.status, scope).toBe(302)
      const loc = new URL(page.location!)
      expect(loc.searchParams.get('error'), scope).toBe('invalid_scope')
      expect(loc.searchParams.get('state')).toBe('sc')
      expect(loc.searchParams.get('iss')).toBe(origin)
    }
    // Nor are they advertised to clients (the MCP SDK asks for every scopes_supported of the PRM).
    const as = await fetch(`${origin}/.well-known/oauth-authorization-server`).then((r) => r.json())
    const prm = await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`).then((r) => r.json())
    for (const list of [as.scopes_supported, prm.scopes_supported]) {
      expect(list).toEqual(expect.arrayContaining(DEFAULT_SCOPES))
      expect(list).not.toContain('credentials:manage')
      expect(list).not.toContain('partners:manage')
    }
  })

  it('an svc_at_ token cannot issue, rotate or revoke API keys', async () => {
    verifies('oauth.no-credential-power')
    const { tokens } = await connect({ scope: 'accounts:read agents:read credentials:manage' })
    const victim = await tenant.api.post(`/users/${tenant.userId}/credentials`, {
      name: 'victim',
      scopes: ['agents:read'],
    })
    expect(victim.status).toBe(201)
    const api = bearer(tokens.access_token)
    for (const r of [
      await api.post(`/users/${tenant.userId}/credentials`, { name: 'escalated', scopes: ['agents:read'] }),
      await api.post(`/credentials/${victim.body.key_id}/rotate`),
      await api.delete(`/credentials/${victim.body.key_id}`),
    ]) {
      expect(r.status).toBe(403)
      expect(err(r).code).toBe('insufficient_scope')
    }
    expect((await createApi(base, victim.body.secret).get('/capabilities')).status).toBe(200)
  })

  it('disconnecting revokes the connection key and every key rotated from it', async () => {
    verifies('oauth.disconnect-chain', 'oauth.connection')
    const { tokens, clientId: cid } = await connect({ scope: 'accounts:read agents:read' })
    const dash = tenantSessionApi(tenant)
    const conn = (await dash.get('/api/oauth/connections')).body.data.find((c: any) => c.client_id === cid)
    const first = await tenant.api.post(`/credentials/${conn.key_id}/rotate`)
    expect(first.status).toBe(201)
    const second = await tenant.api.post(`/credentials/${first.body.key_id}/rotate`)
    expect(second.status).toBe(201)
    for (const secret of [first.body.secret, second.body.secret])
      expect((await bearer(secret).get(`/accounts/${tenant.accountId}`)).status).toBe(200)
    expect((await dash.delete(`/api/oauth/connections/${conn.connection_id}`)).status).toBe(204)
    for (const secret of [tokens.access_token, first.body.secret, second.body.secret]) {
      const r = await bearer(secret).get(`/accounts/${tenant.accountId}`)
      expect(r.status).toBe(401)
      expect(err(r).code).toBe('invalid_credentials')
    }
    const keys = (await dash.get('/api/api-keys')).body.data
    for (const id of [conn.key_id, first.body.key_id, second.body.key_id])
      expect(keys.find((k: any) => k.key_id === id).status).toBe('revoked')
    // The user's other keys are untouched.
    expect((await tenant.api.get(`/accounts/${tenant.accountId}`)).status).toBe(200)
  })
})

describe('login and consent forms against cross-site requests (issue 12)', () => {
  let clientId: string
  beforeAll(async () => {
    clientId = (
      await registerClient(origin, { redirect_uris: [CB], token_endpoint_auth_method: 'none', client_name: 'csrf' })
    ).body.client_id
  })
  const url = () => authorizeUrl(origin, { clientId, redirectUri: CB, challenge: pkce().challenge, method: 'S256' })

  it('refuses a login POST without the form token, with a wrong one, or with one issued to another browser: 403, nobody signed in', async () => {
    verifies('oauth.login-csrf')
    const b = new Browser(origin)
    const page = await b.request('GET', url())
    const good = b.loginForm(page, tenant)
    expect(good.get('csrf')).toBeTruthy()
    const attempts: [string, (f: URLSearchParams) => void, Browser][] = [
      ['no token', (f) => f.delete('csrf'), b],
      [
        'wrong token',
        (f) =>
          f.set(
            'csrf',
            good.get('csrf')!.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
          ),
        b,
      ],
      ['another request', (f) => f.set('return_to', new URL(url()).pathname + new URL(url()).search), b],
      // A cross-site form: the attacker's own valid token, posted by a browser without the cookie.
      ['no cookie', () => {}, new Browser(origin)],
    ]
    for (const [name, spoil, who] of attempts) {
      const form = new URLSearchParams(good)
      spoil(form)
      const r = await who.request('POST', '/oauth/login', form)
      expect(r.status, name).toBe(403)
      expect(r.headers.get('content-type'), name).toContain('text/html')
      expect(
        r.headers.getSetCookie().some((c) => c.startsWith('svc_session=')),
        name,
      ).toBe(false)
    }
    // The genuine form still signs in and returns to the authorize URL.
    const ok = await b.request('POST', '/oauth/login', good)
    expect(ok.status).toBe(303)
    expect(b.cookies.has('svc_session')).toBe(true)
  })

  it('refuses a consent form shown to another session of the same user', async () => {
    verifies('oauth.login-csrf', 'oauth.server')
    const u = url()
    const mine = await new Browser(origin).openAuthorize(u, tenant)
    expect(mine.status).toBe(200)
    const elsewhere = new Browser(origin)
    await elsewhere.openAuthorize(u, tenant)
    const r = await elsewhere.decide(mine, 'approve')
    expect(r.status).toBe(400)
    expect(r.location).toBeNull()
  })
})

describe('CORS', () => {
  it('answers preflights on discovery, OAuth and MCP paths and exposes the challenge headers on errors', async () => {
    verifies('oauth.cors')
    for (const path of [
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-protected-resource/mcp',
      '/oauth/register',
      '/oauth/token',
      '/oauth/revoke',
      '/v1/oauth/token',
      '/mcp',
      '/v1/mcp',
    ]) {
      const r = await fetch(`${origin}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'http://localhost:6274',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, mcp-protocol-version',
        },
      })
      expect(r.status, path).toBe(204)
      expect(r.headers.get('access-control-allow-origin'), path).toMatch(/^(\*|http:\/\/localhost:6274)$/)
      const allow = r.headers.get('access-control-allow-headers')!.split(', ')
      expect(allow).toEqual(
        expect.arrayContaining([
          'authorization',
          'content-type',
          'mcp-protocol-version',
          'mcp-session-id',
          'last-event-id',
          'mcp-method',
          'mcp-name',
        ]),
      )
    }
    const failed = await fetch(`${origin}/oauth/token`, {
      method: 'POST',
      headers: { origin: 'https://claude.ai', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=refresh_token&client_id=svc_oc_nobody',
    })
    expect(failed.status).toBe(401)
    expect(failed.headers.get('access-control-allow-origin')).toBe('*')
    expect(failed.headers.get('access-control-expose-headers')).toBe(
      'www-authenticate, mcp-session-id, mcp-protocol-version',
    )
    const mcp = await fetch(`${origin}/mcp`, { method: 'POST', headers: { origin: 'https://claude.ai' } })
    expect(mcp.headers.get('access-control-allow-origin')).toBe('https://claude.ai')
    expect(mcp.headers.get('access-control-expose-headers')).toContain('www-authenticate')
  })

  it('keeps the REST API closed to other origins and refuses foreign origins on /mcp', async () => {
    verifies('oauth.cors')
    const rest = await fetch(`${base}/users`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    })
    expect(rest.headers.get('access-control-allow-origin')).toBeNull()
    for (const path of ['/mcp', '/v1/mcp', '/api/v1/mcp']) {
      const r = await fetch(`${origin}${path}`, {
        method: 'POST',
        headers: { origin: 'https://evil.example', 'content-type': 'application/json' },
        body: '{}',
      })
      expect(r.status, path).toBe(403)
      expect(r.headers.get('access-control-allow-origin')).toBeNull()
      const pre = await fetch(`${origin}${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      })
      expect(pre.status).toBe(403)
    }
    const own = await fetch(`${origin}/mcp`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST' },
    })
    expect(own.status).toBe(204)
  })
})

describe('OpenAPI', () => {
  it('documents the OAuth endpoints on the service origin with RFC 6749 errors', async () => {
    verifies('oauth.server', 'openapi.document')
    const doc = await fetch(`${base}/openapi.json`).then((r) => r.json())
    const token = doc.paths['/oauth/token']
    expect(token.servers).toEqual([{ url: expect.any(String), description: 'Service origin' }])
    expect(token.post.requestBody.content['application/x-www-form-urlencoded']).toBeDefined()
    expect(token.post.responses['401'].content['application/json'].schema.properties.error_description).toBeDefined()
    expect(doc.paths['/.well-known/oauth-authorization-server'].get).toBeDefined()
    expect(doc.paths['/api/oauth/connections'].get).toBeDefined()
  })
})
