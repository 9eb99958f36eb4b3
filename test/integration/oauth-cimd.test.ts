// Client ID Metadata Documents (MCP 2025-11-25 "Client Registration Approaches"): a URL client_id whose
// document the authorization server fetches through the crawler's SSRF guard. Driven by the MCP SDK's own
// client (its clientMetadataUrl) against servers of its own, which trust the documents' self-signed TLS
// certificate (NODE_EXTRA_CA_CERTS): one that allows 127.0.0.1 as a private host (as every test server
// does), one that allows nothing. The documents are served by the test (helpers/client-documents).
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApi } from '../helpers/api'
import { serveClientDocuments, type DocumentServers } from '../helpers/client-documents'
import { Browser, MemoryProvider, pkce, authorizeUrl, tokenRequest } from '../helpers/oauth'
import { startServer, type TestServer } from '../helpers/server'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'
import { sleep } from '../helpers/wait'

const CB = 'http://127.0.0.1:53682/cb'
const info = { name: 'cimd-e2e', version: '1.0.0' }
type ToolResult = { isError?: boolean; structuredContent?: any; content: { type: string; text?: string }[] }

let docs: DocumentServers
let server: TestServer
let bare: TestServer
let t: Tenant
let n = 0
let ips = 0
/** A Browser with an address of its own (the document-fetch limit counts per client IP). */
const browser = (srv = server) => new Browser(srv.origin, `203.0.113.${++ips}`)

/** A document path, its URL on `at`, and the document itself (valid unless `patch` says otherwise). */
function publish(at: string, patch: Record<string, unknown> = {}, answer: { headers?: Record<string, string> } = {}) {
  const path = `/clients/${++n}/client.json`
  const url = `${at}${path}`
  docs.documents.set(path, (origin) => ({
    headers: answer.headers,
    body: {
      client_id: `${origin}${path}`,
      client_name: 'Docs <b>Client</b>',
      client_uri: 'https://client.example/',
      logo_uri: 'https://client.example/logo.png',
      redirect_uris: [CB],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...patch,
    },
  }))
  return { path, url }
}

/** The SDK's provider, identified by a document URL instead of a registration. */
class DocumentProvider extends MemoryProvider {
  constructor(readonly clientMetadataUrl: string) {
    super(CB)
  }
}

/** The SDK client's first connect: the 401 sends it through discovery to the authorize URL it would open. */
async function authorizeUrlOf(srv: TestServer, documentUrl: string) {
  const p = new DocumentProvider(documentUrl)
  const transport = new StreamableHTTPClientTransport(new URL(`${srv.origin}/mcp`), { authProvider: p })
  await expect(new Client(info).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError)
  return { p, transport, url: p.url! }
}

/** GET of a (client-supplied) authorize URL: must be the invalid_client page, never a redirect. */
async function expectInvalidClient(url: string | URL, srv = server, status = 400) {
  const page = await browser(srv).request('GET', url.toString())
  expect(page.status, page.html.slice(0, 400)).toBe(status)
  expect(page.location).toBeNull()
  expect(page.html).toContain('<code>invalid_client</code>')
  return page
}

beforeAll(async () => {
  docs = await serveClientDocuments()
  const env = { NODE_EXTRA_CA_CERTS: docs.caFile, SVC_RATE_LIMITS: 'client_document=12' }
  ;[server, bare] = await Promise.all([
    startServer({ env }),
    startServer({ env: { ...env, SVC_ALLOW_PRIVATE_HOSTS: '' } }),
  ])
  t = await createTenant(createApi(server.base, server.masterKey))
}, 120_000)
afterAll(async () => {
  await Promise.all([server?.stop('SIGKILL'), bare?.stop('SIGKILL')])
  await docs?.close()
})

describe('Client ID Metadata Documents', () => {
  it('the authorization server metadata advertises them and the public client method; DCR stays', async () => {
    verifies('mcp.cimd.metadata')
    const meta = await (await fetch(`${server.origin}/.well-known/oauth-authorization-server`)).json()
    expect(meta.client_id_metadata_document_supported).toBe(true)
    expect(meta.token_endpoint_auth_methods_supported).toContain('none')
    expect(meta.registration_endpoint).toBe(`${server.origin}/oauth/register`)
  })

  it('SDK client: document URL as client_id → consent with its name and host → token → tools; refresh and revoke', async () => {
    verifies('mcp.cimd.flow')
    const { url: docUrl } = publish(docs.https, {}, { headers: { 'cache-control': 'max-age=600' } })
    const { p, transport, url } = await authorizeUrlOf(server, docUrl)
    // No registration: the SDK used the document URL because the metadata says it may.
    expect(p.client?.client_id).toBe(docUrl)
    expect(url.searchParams.get('client_id')).toBe(docUrl)
    expect(url.searchParams.get('code_challenge_method')).toBe('S256')
    expect(url.searchParams.get('resource')).toBe(`${server.origin}/mcp`)

    const b = browser()
    const consent = await b.openAuthorize(url.toString(), t)
    expect(consent.status).toBe(200)
    // The document's name (escaped: it is the client's own text) and the host that publishes it.
    expect(consent.html).toContain('Allow Docs &lt;b&gt;Client&lt;/b&gt; to access your account?')
    expect(consent.html).toContain(`describes itself at <strong>${new URL(docUrl).host}</strong>`)
    expect(consent.html).toContain('<strong>127.0.0.1:53682</strong>')
    const done = await b.decide(consent, 'approve')
    expect(done.status).toBe(302)
    const back = new URL(done.location!)
    expect(back.searchParams.get('iss')).toBe(server.origin)
    // The page, the login's second GET and the consent POST all read one fetch (max-age=600).
    expect(docs.hitsOf(docUrl)).toBe(1)

    await transport.finishAuth(back.searchParams.get('code')!)
    expect(p.saved?.access_token).toMatch(/^svc_at_/)
    const client = new Client(info)
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`), { authProvider: p }))
    const names = (await client.listTools()).tools.map((x) => x.name)
    expect(names).toContain('list_agents')
    const agents = (await client.callTool({ name: 'list_agents', arguments: {} })) as ToolResult
    expect(agents.isError, agents.content[0]?.text).toBeFalsy()
    expect(agents.structuredContent.agents).toEqual([])

    // The dashboard lists the connection under the document's client_id and name.
    const login = await createApi(server.origin).post('/api/auth/login', { email: t.email, password: t.password })
    const conns = await createApi(server.origin).request('GET', '/api/oauth/connections', {
      headers: { authorization: `Session ${login.body.session_token}` },
    })
    expect(conns.body.data.find((c: any) => c.client_id === docUrl)).toMatchObject({
      client_name: 'Docs <b>Client</b>',
      redirect_hosts: ['127.0.0.1:53682'],
    })

    // Refresh and revocation identify the client by its URL as well.
    const rt = p.saved!.refresh_token!
    expect(await auth(p, { serverUrl: `${server.origin}/mcp` })).toBe('AUTHORIZED')
    expect(p.saved!.refresh_token).not.toBe(rt)
    expect((await client.listTools()).tools.length).toBe(names.length)
    const revoke = await fetch(`${server.origin}/oauth/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ token: p.saved!.refresh_token!, client_id: docUrl }),
    })
    expect(revoke.status).toBe(200)
    await expect(client.listTools()).rejects.toBeInstanceOf(UnauthorizedError)
    // Public client: a secret is refused at the token endpoint.
    const withSecret = await tokenRequest(server.origin, {
      grant_type: 'refresh_token',
      refresh_token: rt,
      client_id: docUrl,
      client_secret: 'x',
    })
    expect(withSecret.status).toBe(401)
    expect(withSecret.body.error).toBe('invalid_client')
  })

  it('a document whose client_id is not its URL, or that lacks the redirect_uri, is invalid_client, shown and never redirected', async () => {
    verifies('mcp.cimd.mismatch')
    const cases: Record<string, unknown>[] = [
      { client_id: `${docs.https}/someone-else.json` },
      { redirect_uris: ['https://app.example/cb'] },
      { token_endpoint_auth_method: 'client_secret_post' },
      { client_secret: 'shared' },
      { redirect_uris: 'http://127.0.0.1:53682/cb' },
    ]
    for (const patch of cases) {
      const { url: docUrl } = publish(docs.https, patch)
      const { url } = await authorizeUrlOf(server, docUrl)
      await expectInvalidClient(url)
      expect(docs.hitsOf(docUrl), JSON.stringify(patch)).toBe(1)
    }
    // Not JSON at all, and a document that is gone.
    const path = `/clients/${++n}/not-json`
    docs.documents.set(path, { body: '<html>hello</html>' })
    await expectInvalidClient((await authorizeUrlOf(server, `${docs.https}${path}`)).url)
    await expectInvalidClient((await authorizeUrlOf(server, `${docs.https}/missing/client.json`)).url)
    // A valid document, but the request names a redirect_uri it does not list.
    const { url: docUrl } = publish(docs.https)
    const { challenge } = pkce()
    const page = await expectInvalidClient(
      authorizeUrl(server.origin, {
        clientId: docUrl,
        redirectUri: 'https://attacker.example/cb',
        challenge,
        method: 'S256',
      }),
    )
    expect(page.html).toContain('not listed in the application')
    // No client row came of any of it: the token endpoint does not know the URL.
    const tok = await tokenRequest(server.origin, {
      grant_type: 'refresh_token',
      refresh_token: 'x',
      client_id: docUrl,
    })
    expect(tok.status).toBe(401)
    expect(tok.body.error).toBe('invalid_client')
  })

  it('a document on a private host is refused unless the host is allowed; so is a redirect to a private host', async () => {
    verifies('mcp.cimd.private-host')
    // The same document: accepted where 127.0.0.1 is allowed, refused (without a request) where it is not.
    const { url: docUrl } = publish(docs.https)
    const allowed = await browser().openAuthorize((await authorizeUrlOf(server, docUrl)).url.toString(), t)
    expect(allowed.status).toBe(200)
    expect(allowed.html).toContain('name="request_id"')
    expect(docs.hitsOf(docUrl)).toBe(1)
    const refused = await expectInvalidClient((await authorizeUrlOf(bare, docUrl)).url, bare)
    expect(refused.html).toContain('private or reserved address')
    expect(docs.hitsOf(docUrl)).toBe(1)

    // An allowed host redirecting to another loopback address (private, not allowed): refused, never reached.
    const target = publish(docs.httpsOther)
    const hop = `/clients/${++n}/hop.json`
    docs.documents.set(hop, { status: 302, headers: { location: target.url } })
    await expectInvalidClient((await authorizeUrlOf(server, `${docs.https}${hop}`)).url)
    expect(docs.hitsOf(`${docs.https}${hop}`)).toBe(1)
    expect(docs.hits.filter((h) => h.startsWith(docs.httpsOther))).toEqual([])

    // http is accepted only on an allowed host; anywhere else it is refused before any request.
    const { challenge } = pkce()
    const plain = publish(docs.http)
    const ok = await browser().request(
      'GET',
      authorizeUrl(server.origin, { clientId: plain.url, redirectUri: CB, challenge, method: 'S256' }),
    )
    expect(ok.status).toBe(200)
    expect(docs.hitsOf(plain.url)).toBe(1)
    await expectInvalidClient(
      authorizeUrl(bare.origin, { clientId: plain.url, redirectUri: CB, challenge, method: 'S256' }),
      bare,
    )
    expect(docs.hitsOf(plain.url)).toBe(1)
    // URL shapes the draft forbids: no path, a fragment, credentials, dot segments.
    for (const bad of [
      `${docs.https}/`,
      `${docs.https}/c.json#frag`,
      `https://user:pw@127.0.0.1:1/c.json`,
      `${docs.https}/a/../c.json`,
    ]) {
      await expectInvalidClient(
        authorizeUrl(server.origin, { clientId: bad, redirectUri: CB, challenge, method: 'S256' }),
      )
    }
  })

  it('a document over 5 KB or slower than 5 s is refused; a fetch limit per client IP bounds the fetches', async () => {
    verifies('mcp.cimd.bounds')
    const { challenge } = pkce()
    const open = (clientId: string, b = browser()) =>
      b.request('GET', authorizeUrl(server.origin, { clientId, redirectUri: CB, challenge, method: 'S256' }))
    // Just under 5 KB is fine; just over is not.
    const pad = (bytes: number) => ({ client_name: 'Big', software_statement_note: 'x'.repeat(bytes) })
    const small = publish(docs.https, pad(4_700))
    expect((await open(small.url)).status).toBe(200)
    const big = publish(docs.https, pad(5_200))
    const tooBig = await expectInvalidClient(
      authorizeUrl(server.origin, { clientId: big.url, redirectUri: CB, challenge, method: 'S256' }),
    )
    expect(tooBig.html).toContain('exceeds 5120 bytes')

    const slowPath = `/clients/${++n}/slow.json`
    const slowUrl = `${docs.https}${slowPath}`
    docs.documents.set(slowPath, {
      delayMs: 8_000,
      body: { client_id: slowUrl, redirect_uris: [CB], token_endpoint_auth_method: 'none' },
    })
    const started = Date.now()
    const slow = await expectInvalidClient(
      authorizeUrl(server.origin, { clientId: slowUrl, redirectUri: CB, challenge, method: 'S256' }),
    )
    const took = Date.now() - started
    expect(slow.html).toContain('within 5000 ms')
    expect(took).toBeGreaterThanOrEqual(4_900)
    expect(took).toBeLessThan(7_900)

    // 12 fetches a minute per client IP (this server's SVC_RATE_LIMITS); cache hits are free.
    const b = browser()
    const urls = Array.from({ length: 13 }, () => publish(docs.https).url)
    for (const u of urls.slice(0, 12)) expect((await open(u, b)).status).toBe(200)
    expect((await open(urls[0], b)).status).toBe(200)
    const limited = await open(urls[12], b)
    expect(limited.status).toBe(429)
    expect(limited.location).toBeNull()
    expect(docs.hitsOf(urls[12])).toBe(0)
    expect((await open(urls[12])).status).toBe(200)
  })

  it('caches a document for its Cache-Control max-age, then fetches it again', async () => {
    verifies('mcp.cimd.bounds')
    const { challenge } = pkce()
    const { url: docUrl } = publish(docs.https, {}, { headers: { 'cache-control': 'public, max-age=6' } })
    const open = () =>
      browser().request(
        'GET',
        authorizeUrl(server.origin, { clientId: docUrl, redirectUri: CB, challenge, method: 'S256' }),
      )
    const first = Date.now()
    expect((await open()).status).toBe(200)
    expect((await open()).status).toBe(200)
    expect(docs.hitsOf(docUrl)).toBe(1)
    await sleep(Math.max(0, first + 7_000 - Date.now()))
    expect((await open()).status).toBe(200)
    expect(docs.hitsOf(docUrl)).toBe(2)
    expect((await open()).status).toBe(200)
    expect(docs.hitsOf(docUrl)).toBe(2)
  })
})
