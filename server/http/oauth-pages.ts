// HTTP glue of the authorization endpoint's pages (authorize GET/POST, the login form): the session
// lookup that never throws, HTML answers and redirects. The OAuth logic lives in domain/oauth.
import {
  appendResponseHeader,
  getCookie,
  getRequestHost,
  getRequestURL,
  readRawBody,
  sendRedirect,
  setResponseHeader,
  setResponseStatus,
  type H3Event,
} from 'h3'
import { eq } from 'drizzle-orm'
import type { Runtime } from '~/kit/runtime'
import { sessionToken } from './define-session-route'
import { users } from '~/db/schema'
import { resolveSession, type SessionUser } from '~/domain/sessions/sessions'
import { signPending, type AuthRequest } from '~/domain/oauth/authorize'
import type { ClientRow } from '~/domain/oauth/clients'
import { documentHost } from '~/domain/oauth/client-document'
import { LOGIN_COOKIE, LOGIN_FORM_TTL_MS, loginNonce, signLoginForm, verifyLoginForm } from '~/domain/oauth/login-csrf'
import { consentPage, errorPage, loginPage, PAGE_HEADERS } from '~/http/pages/oauth'
import type { Scope } from '~/domain/credentials/scopes'

/** A dashboard session and the token it came with (the consent form is bound to that token). */
export type PageSession = SessionUser & { token: string }

/** The dashboard session of a browser request, or null (no cookie, an API key, expired…). */
export async function optionalSession(event: H3Event, runtime: Runtime): Promise<PageSession | null> {
  let token: string | undefined
  try {
    token = sessionToken(event)
  } catch {
    return null
  }
  const session = token ? await resolveSession(runtime.database, token) : null
  return session && token ? { ...session, token } : null
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1'])

/** The login form's CSRF cookie, with the session cookie's attributes (Secure except on loopback). */
function setLoginCookie(event: H3Event, nonce: string) {
  const host = getRequestHost(event, { xForwardedHost: true }).toLowerCase()
  const hostname = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]
  const secure = LOOPBACK.has(hostname) ? '' : '; Secure'
  appendResponseHeader(
    event,
    'Set-Cookie',
    `${LOGIN_COOKIE}=${nonce}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${LOGIN_FORM_TTL_MS / 1000}${secure}`,
  )
}

/** The login form for `returnTo`, with a fresh form token bound to it and to this browser's cookie. */
export function renderLogin(
  event: H3Event,
  runtime: Runtime,
  returnTo: string,
  opts: { status?: number; error?: string } = {},
) {
  const nonce = loginNonce(getCookie(event, LOGIN_COOKIE))
  setLoginCookie(event, nonce)
  return sendPage(
    event,
    opts.status ?? 200,
    loginPage(returnTo, signLoginForm(nonce, returnTo, runtime.config.secret), opts.error),
  )
}

/** The posted login form came from our page in this browser, for this authorization request. */
export const loginFormValid = (event: H3Event, runtime: Runtime, form: URLSearchParams, returnTo: string) =>
  verifyLoginForm(form.get('csrf'), getCookie(event, LOGIN_COOKIE), returnTo, runtime.config.secret)

export function sendPage(event: H3Event, status: number, html: string): string {
  setResponseStatus(event, status)
  for (const [k, v] of Object.entries(PAGE_HEADERS)) setResponseHeader(event, k, v)
  return html
}

/** `code`: the OAuth error code (e.g. invalid_client), shown for whoever debugs the client. */
export const sendErrorPage = (event: H3Event, status: number, title: string, message: string, code?: string) =>
  sendPage(event, status, errorPage(title, message, code))

/** 302 to the client's redirect_uri (authorization response or error). */
export const redirectTo = (event: H3Event, location: string) => sendRedirect(event, location, 302)

/** The path and query of the authorize request, where the login form returns to. */
export const authorizeReturnPath = (event: H3Event) => {
  const url = getRequestURL(event)
  return `${url.pathname}${url.search}`
}

/** Only our own authorize URL: the login form must not become an open redirect. */
export const safeReturnPath = (value: string | undefined) =>
  value && /^\/(v1\/)?oauth\/authorize\?[^\\\s]*$/.test(value) && !value.startsWith('//') ? value : null

export async function readPageForm(event: H3Event): Promise<URLSearchParams> {
  const raw = await readRawBody(event, 'utf8')
  return new URLSearchParams(raw ?? '')
}

export async function renderConsent(
  event: H3Event,
  runtime: Runtime,
  session: PageSession,
  client: ClientRow,
  request: AuthRequest,
  opts: { status?: number; error?: string; scopes?: Scope[] } = {},
) {
  const [user] = await runtime.database.db
    .select({ email: users.email })
    .from(users)
    .where(eq(users.id, session.userId))
  const redirectHost = new URL(request.redirectUri).host
  return sendPage(
    event,
    opts.status ?? 200,
    consentPage({
      clientName: client.clientName,
      clientId: client.id,
      clientHost: documentHost(client.id),
      redirectHost,
      email: user?.email ?? session.userId,
      accountId: session.accountId,
      scopes: request.scopes,
      requestId: signPending(request, { userId: session.userId, sessionToken: session.token }, runtime.config.secret),
      error: opts.error,
    }),
  )
}
