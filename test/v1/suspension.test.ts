// Suspension over HTTP (decisions, Security rules "Suspension"): a suspended user or account is refused on
// every authenticated route with 403 account_suspended, through its personal keys, its dashboard sessions,
// its OAuth access tokens and the MCP connector alike, at once; resuming lets all of them in again at once.
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, err } from '../helpers/api'
import { createTenant, type Tenant } from '../helpers/tenant'
import { authorizeUrl, Browser, pkce, registerClient, tokenRequest } from '../helpers/oauth'
import { verifies } from '../requirements'

const origin = inject('origin')
const base = inject('base')
const master = createApi(base, inject('masterKey'))
const dash = createApi(origin)
const CB = 'http://127.0.0.1:53682/cb'

let t: Tenant
let session: string
let accessToken: string

/** An svc_at_ token for the tenant, through the real authorize → consent → token exchange over HTTP. */
async function oauthToken(tenant: Tenant): Promise<string> {
  const reg = await registerClient(origin, {
    redirect_uris: [CB],
    token_endpoint_auth_method: 'none',
    client_name: 'suspension',
  })
  expect(reg.status).toBe(201)
  const { verifier, challenge } = pkce()
  const back = await new Browser(origin).approve(
    authorizeUrl(origin, {
      clientId: reg.body.client_id,
      redirectUri: CB,
      challenge,
      method: 'S256',
      state: 's',
      scope: 'accounts:read agents:read',
      resource: `${origin}/mcp`,
    }),
    tenant,
  )
  const tok = await tokenRequest(origin, {
    grant_type: 'authorization_code',
    code: back.searchParams.get('code')!,
    code_verifier: verifier,
    redirect_uri: CB,
    client_id: reg.body.client_id,
    resource: `${origin}/mcp`,
  })
  expect(tok.status).toBe(200)
  return tok.body.access_token
}

const mcp = (token: string) =>
  fetch(`${origin}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  })

beforeAll(async () => {
  t = await createTenant(master)
  const login = await dash.post('/api/auth/login', { email: t.email, password: t.password })
  expect(login.status).toBe(200)
  session = login.body.session_token
  accessToken = await oauthToken(t)
}, 120_000)

const keyApi = () => t.api
const tokenApi = () => createApi(base, accessToken)

async function everyCredential() {
  return {
    key: await keyApi().get(`/accounts/${t.accountId}`),
    session: await dash.get('/api/api-keys', { headers: { authorization: `Session ${session}` } }),
    oauth: await tokenApi().get(`/accounts/${t.accountId}`),
    mcp: await mcp(t.key),
    mcpOauth: await mcp(accessToken),
  }
}

describe('suspension', () => {
  it('refuses the key, the session, the OAuth token and /mcp with 403 account_suspended at once; resuming restores them at once', async () => {
    verifies('security.suspension')
    const before = await everyCredential()
    expect([
      before.key.status,
      before.session.status,
      before.oauth.status,
      before.mcp.status,
      before.mcpOauth.status,
    ]).toEqual([200, 200, 200, 200, 200])

    expect((await master.patch(`/users/${t.userId}`, { status: 'suspended' })).status).toBe(200)
    const during = await everyCredential()
    for (const [name, r] of [
      ['key', during.key],
      ['session', during.session],
      ['oauth', during.oauth],
    ] as const) {
      expect(r.status, name).toBe(403)
      expect(err(r).code, name).toBe('account_suspended')
    }
    for (const [name, r] of [
      ['mcp key', during.mcp],
      ['mcp oauth', during.mcpOauth],
    ] as const) {
      expect(r.status, name).toBe(403)
      const body = (await r.json()) as any
      expect(body.jsonrpc, name).toBe('2.0')
      expect(body.error.data.code, name).toBe('account_suspended')
    }
    // Writes too, and every other route: the credential itself is refused, before scope or validation.
    expect(err(await keyApi().post(`/users/${t.userId}/credentials`, { scopes: ['agents:read'] })).code).toBe(
      'account_suspended',
    )
    expect(err(await keyApi().get('/agents/agt_1')).code).toBe('account_suspended')
    expect(
      err(
        await dash.post(
          '/api/api-keys',
          { scopes: ['agents:read'] },
          { headers: { authorization: `Session ${session}` } },
        ),
      ).code,
    ).toBe('account_suspended')
    // The master key is never suspended and still manages the user.
    expect((await master.get(`/users/${t.userId}`)).body.status).toBe('suspended')

    expect((await master.patch(`/users/${t.userId}`, { status: 'active' })).status).toBe(200)
    const after = await everyCredential()
    expect([
      after.key.status,
      after.session.status,
      after.oauth.status,
      after.mcp.status,
      after.mcpOauth.status,
    ]).toEqual([200, 200, 200, 200, 200])
  }, 60_000)

  it('another tenant is untouched by a suspension', async () => {
    verifies('security.suspension')
    const a = await createTenant(master)
    const b = await createTenant(master)
    expect((await master.patch(`/users/${a.userId}`, { status: 'suspended' })).status).toBe(200)
    expect(err(await a.api.get(`/accounts/${a.accountId}`)).code).toBe('account_suspended')
    expect((await b.api.get(`/accounts/${b.accountId}`)).status).toBe(200)
  })

  it('documents account_suspended on authenticated routes in the OpenAPI document', async () => {
    verifies('security.suspension')
    const doc = (await createApi(base).get('/openapi.json')).body
    expect(doc.paths['/accounts/{acc}'].get.responses['403'].description).toContain('account_suspended')
    expect(doc.paths['/api/api-keys'].get.responses['403'].description).toContain('account_suspended')
  })
})
