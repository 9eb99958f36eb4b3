// A headless "browser" for the OAuth authorization endpoint: it follows the login form and the consent
// form over HTTP exactly as a person would (no shortcuts into the database), plus PKCE helpers.
import { createHash, randomBytes } from 'node:crypto'
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js'
import { checkConformance } from './openapi-conformance'
import type { Tenant } from './tenant'

export const pkce = () => {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

export interface Page {
  status: number
  location: string | null
  html: string
  headers: Headers
}

export class Browser {
  /** The cookie jar: the session cookie and the login form's CSRF cookie, as a browser keeps them. */
  readonly cookies = new Map<string, string>()
  constructor(
    readonly origin: string,
    readonly ip = `203.0.113.${Math.floor(Math.random() * 200) + 20}`,
  ) {}

  get cookie(): string | null {
    return this.cookies.size ? [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') : null
  }

  async request(method: string, url: string, form?: URLSearchParams): Promise<Page> {
    const headers: Record<string, string> = { 'x-forwarded-for': this.ip }
    if (this.cookie) headers.cookie = this.cookie
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded'
    const res = await fetch(new URL(url, this.origin), { method, headers, body: form?.toString(), redirect: 'manual' })
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';')
      const i = pair.indexOf('=')
      const [name, value] = [pair.slice(0, i).trim(), pair.slice(i + 1)]
      if (!value || /max-age=0\b/i.test(set)) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    const html = await res.text()
    const contentType = res.headers.get('content-type') ?? ''
    const body = contentType.includes('json') && html ? JSON.parse(html) : undefined
    await checkConformance({ method, url: new URL(url, this.origin).toString(), status: res.status, contentType, body })
    return { status: res.status, location: res.headers.get('location'), html, headers: res.headers }
  }

  /** The login form's fields as the page rendered them (return_to and the CSRF token), plus the credentials. */
  loginForm(page: Page, tenant: Pick<Tenant, 'email' | 'password'>): URLSearchParams {
    const form = new URLSearchParams({
      email: tenant.email,
      password: tenant.password,
      return_to: hidden(page.html, 'return_to'),
    })
    if (page.html.includes('name="csrf"')) form.set('csrf', hidden(page.html, 'csrf'))
    return form
  }

  /** Logs in through the authorize page's own form when it asks; answers the consent page. */
  async openAuthorize(url: string, tenant: Pick<Tenant, 'email' | 'password'>): Promise<Page> {
    let page = await this.request('GET', url)
    if (page.status === 200 && page.html.includes('action="/oauth/login"')) {
      const login = await this.request('POST', '/oauth/login', this.loginForm(page, tenant))
      if (login.status !== 303) throw new Error(`login form: ${login.status} ${login.html.slice(0, 300)}`)
      page = await this.request('GET', login.location!)
    }
    return page
  }

  /** Submits the consent form: approve with the given scopes (default: everything offered) or deny. */
  async decide(consent: Page, decision: 'approve' | 'deny', keep?: (scope: string) => boolean): Promise<Page> {
    const form = new URLSearchParams({ request_id: hidden(consent.html, 'request_id'), decision })
    for (const s of offeredScopes(consent.html)) if (!keep || keep(s)) form.append('scope', s)
    return this.request('POST', '/oauth/authorize', form)
  }

  /** The whole dance: authorize URL → (login) → consent → approve → the redirect back to the client. */
  async approve(
    url: string,
    tenant: Pick<Tenant, 'email' | 'password'>,
    keep?: (scope: string) => boolean,
  ): Promise<URL> {
    const consent = await this.openAuthorize(url, tenant)
    if (consent.status !== 200 || !consent.html.includes('name="request_id"'))
      throw new Error(`consent page: ${consent.status} ${consent.html.slice(0, 300)}`)
    const done = await this.decide(consent, 'approve', keep)
    if (done.status !== 302) throw new Error(`approve: ${done.status} ${done.html.slice(0, 300)}`)
    return new URL(done.location!)
  }
}

const decode = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')

export function hidden(html: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html)
  if (!m) throw new Error(`no hidden ${name} in page`)
  return decode(m[1])
}

export const offeredScopes = (html: string) =>
  [...html.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => decode(m[1]))

export function authorizeUrl(
  origin: string,
  p: {
    clientId: string
    redirectUri: string
    challenge?: string
    method?: string
    state?: string
    scope?: string
    resource?: string
    extra?: Record<string, string>
  },
): string {
  const u = new URL(`${origin}/oauth/authorize`)
  u.searchParams.set('response_type', 'code')
  u.searchParams.set('client_id', p.clientId)
  u.searchParams.set('redirect_uri', p.redirectUri)
  if (p.challenge !== undefined) u.searchParams.set('code_challenge', p.challenge)
  if (p.method !== undefined) u.searchParams.set('code_challenge_method', p.method)
  if (p.state) u.searchParams.set('state', p.state)
  if (p.scope !== undefined) u.searchParams.set('scope', p.scope)
  if (p.resource !== undefined) u.searchParams.set('resource', p.resource)
  for (const [k, v] of Object.entries(p.extra ?? {})) u.searchParams.set(k, v)
  return u.toString()
}

/** A public client registered over HTTP. */
export async function registerClient(
  origin: string,
  body: Record<string, unknown>,
  ip = `198.51.100.${Math.floor(Math.random() * 250) + 1}`,
) {
  const res = await fetch(`${origin}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
    body: JSON.stringify(body),
  })
  return checked('POST', `${origin}/oauth/register`, res)
}

export async function tokenRequest(
  origin: string,
  params: Record<string, string>,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${origin}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params).toString(),
  })
  return checked('POST', `${origin}/oauth/token`, res)
}

/** The JSON answer of an OAuth endpoint, checked against the OpenAPI document. */
async function checked(method: string, url: string, res: Response) {
  const body = (await res.json()) as any
  await checkConformance({ method, url, status: res.status, contentType: res.headers.get('content-type') ?? '', body })
  return { status: res.status, body, headers: res.headers }
}

/**
 * The MCP SDK's OAuthClientProvider contract kept in memory (what an MCP client embeds): `url` is where it
 * would send a browser, `saved` its tokens, `client` its registration.
 */
export class MemoryProvider implements OAuthClientProvider {
  constructor(
    readonly callback: string,
    readonly fixedState?: string,
  ) {}
  url?: URL
  client?: OAuthClientInformationMixed
  saved?: OAuthTokens
  verifier?: string
  get redirectUrl() {
    return this.callback
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'sdk e2e',
      redirect_uris: [this.callback],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }
  }
  state() {
    return this.fixedState ?? 'st-' + Math.random().toString(36).slice(2)
  }
  clientInformation() {
    return this.client
  }
  saveClientInformation(c: OAuthClientInformationMixed) {
    this.client = c
  }
  tokens() {
    return this.saved
  }
  saveTokens(t: OAuthTokens) {
    this.saved = t
  }
  redirectToAuthorization(u: URL) {
    this.url = u
  }
  saveCodeVerifier(v: string) {
    this.verifier = v
  }
  codeVerifier() {
    return this.verifier!
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'tokens') this.saved = undefined
    if (scope === 'all' || scope === 'client') this.client = undefined
  }
}
