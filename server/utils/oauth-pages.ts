// HTTP glue of the authorization endpoint's pages (authorize GET/POST, the login form): the session
// lookup that never throws, HTML answers and redirects. The OAuth logic lives in domain/oauth.
import { getRequestURL, readRawBody, sendRedirect, setResponseHeader, setResponseStatus, type H3Event } from 'h3'
import { eq } from 'drizzle-orm'
import type { Runtime } from './runtime'
import { sessionToken } from './define-session-route'
import { users } from '../db/schema'
import { resolveSession, type SessionUser } from '../domain/sessions/sessions'
import { signPending, type AuthRequest } from '../domain/oauth/authorize'
import type { ClientRow } from '../domain/oauth/clients'
import { consentPage, errorPage, PAGE_HEADERS } from '../domain/oauth/pages'
import type { Scope } from '../domain/credentials/scopes'

/** The dashboard session of a browser request, or null (no cookie, an API key, expired…). */
export async function optionalSession(event: H3Event, runtime: Runtime): Promise<SessionUser | null> {
  let token: string | undefined
  try {
    token = sessionToken(event)
  } catch {
    return null
  }
  return token ? resolveSession(runtime.database, token) : null
}

export function sendPage(event: H3Event, status: number, html: string): string {
  setResponseStatus(event, status)
  for (const [k, v] of Object.entries(PAGE_HEADERS)) setResponseHeader(event, k, v)
  return html
}

export const sendErrorPage = (event: H3Event, status: number, title: string, message: string) => sendPage(event, status, errorPage(title, message))

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

export async function renderConsent(event: H3Event, runtime: Runtime, session: SessionUser, client: ClientRow, request: AuthRequest, opts: { status?: number; error?: string; scopes?: Scope[] } = {}) {
  const [user] = await runtime.database.db.select({ email: users.email }).from(users).where(eq(users.id, session.userId))
  const redirectHost = new URL(request.redirectUri).host
  return sendPage(event, opts.status ?? 200, consentPage({
    clientName: client.clientName, clientId: client.id, redirectHost, email: user?.email ?? session.userId, accountId: session.accountId,
    scopes: request.scopes, requestId: signPending(request, session.userId, runtime.config.secret), error: opts.error,
  }))
}
