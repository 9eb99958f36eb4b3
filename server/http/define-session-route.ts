// The factory for dashboard routes (decisions "Dashboard origin"): a session from the svc_session cookie
// or `Authorization: Session <token>`, never an API key. Validation, envelopes and the rate class work as
// in defineApiRoute; the `__api` meta (auth 'session') is what the OpenAPI builder reads. Every request is
// audited like the API's, under credential_type `session` and the session's `ses_…` id.
import {
  appendResponseHeader,
  defineEventHandler,
  getCookie,
  getHeader,
  getRequestHost,
  getRouterParams,
  setResponseStatus,
  type EventHandler,
  type H3Event,
} from 'h3'
import type * as v from 'valibot'
import type { Principal } from '~/domain/credentials/principal'
import {
  lookupSession,
  presentSession,
  sessionPrincipal,
  SESSION_TTL_MS,
  type Session,
  type SessionUser,
} from '~/domain/sessions/sessions'
import { useRuntime, type Runtime } from '~/kit/runtime'
import { Errors, apiError } from '~/lib/errors'
import { envelopeOf } from './define-api-route'
import { list, single } from './envelope'
import { bindKeyset } from './keyset'
import { auditOnFinish, type AuditedAs } from './pipeline/audit'
import { applyRateLimit, countAuthFailure, rateClassOf, requireAllowedIp, underFailureLimit } from './pipeline/guards'
import { parseBody, parseQuery, parseWith } from './pipeline/parse'
import type { ApiRouteMeta, ApiRouteOptions, BindKeyset, ObjSchema, Out } from './route-meta'

export const SESSION_COOKIE = 'svc_session'

export interface SessionRouteContext<P, Q, B> {
  event: H3Event
  params: P
  query: Q
  body: B
  session: SessionUser
  /** Synthetic personal principal of the logged-in user (see sessionPrincipal). */
  principal: Principal
  runtime: Runtime
  keyset: BindKeyset
}

type SessionRouteOptions<PS, QS, BS, R> = Omit<
  ApiRouteOptions<PS, QS, BS, R>,
  'auth' | 'scope' | 'anyScope' | 'dataRoute' | 'raw' | 'handler'
> & {
  handler: (ctx: SessionRouteContext<Out<PS>, Out<QS>, Out<BS>>) => R | Promise<R>
}

export function defineSessionRoute<
  PS extends ObjSchema | undefined = undefined,
  QS extends ObjSchema | undefined = undefined,
  BS extends v.GenericSchema | undefined = undefined,
  R = unknown,
>(opts: SessionRouteOptions<PS, QS, BS, R>) {
  const meta = { ...opts, auth: 'session', handler: undefined } as ApiRouteMeta
  const handler = defineEventHandler(async (event) => {
    const runtime = useRuntime()
    auditDashboard(event, runtime)
    const session = await authenticateSession(event, runtime)
    const principal = sessionPrincipal(session)
    event.context.principal = principal
    event.context.dashboardSession = {
      sessionId: session.sessionId,
      accountId: session.accountId,
    } satisfies AuditedSession
    // A session opened by a login link is confined to the issuing credential's addresses.
    requireAllowedIp(event, session.ipAllowlist, 'session')
    await applyRateLimit(event, runtime, principal.credentialId, rateClassOf(opts, event))
    const params = parseWith(opts.params, getRouterParams(event, { decode: true }), 'params')
    const { query } = parseQuery(event, meta)
    const { body } = await parseBody(event, meta)
    const keyset = bindKeyset(event, principal, runtime.config.secret)
    const result = await opts.handler({ event, params, query, body, session, principal, runtime, keyset } as any)
    const answer = envelopeOf(opts.status ?? 200, result, false, 200)
    setResponseStatus(event, answer.status)
    if (answer.kind === 'empty') return null
    if (answer.kind === 'list') return list(event, answer.payload as any)
    return single(event, answer.payload as object)
  })
  return Object.assign(handler, { __api: meta })
}

/** The token a dashboard request carries: the Session header wins over the cookie. */
export function sessionToken(event: H3Event): string | undefined {
  const header = getHeader(event, 'authorization')
  if (header) {
    const m = /^Session[ ]+(\S+)\s*$/i.exec(header)
    // Bearer (an API key, the master key or an OAuth token) or any other scheme: not a dashboard credential.
    if (!m)
      throw apiError(
        'invalid_credentials',
        'Dashboard routes need a session (cookie svc_session or Authorization: Session <token> from POST /api/auth/login); API keys are not accepted here.',
      )
    return m[1]
  }
  return getCookie(event, SESSION_COOKIE) || undefined
}

async function authenticateSession(event: H3Event, runtime: Runtime): Promise<SessionUser> {
  const token = sessionToken(event)
  if (!token) throw apiError('missing_credentials', 'Log in first: POST /api/auth/login sets the svc_session cookie.')
  const found = await lookupSession(runtime.database, token)
  if (!found) {
    await countAuthFailure(event, runtime)
    throw apiError('invalid_credentials', 'The session is unknown, expired or logged out; log in again.')
  }
  if (found.suspended) throw Errors.accountSuspended()
  return found.session
}

/** Who an audited dashboard request acted as, once known (event.context.dashboardSession). */
export interface AuditedSession {
  sessionId: string
  accountId: string
}

/**
 * One audit row per dashboard request (login, link redemption, logout and every session route), written
 * after the response like the API's: credential_type `session`, credential_id the session's `ses_…` id,
 * or null when no session was established (a failed login).
 */
export function auditDashboard(event: H3Event, runtime: Runtime) {
  auditOnFinish(event, runtime, (): AuditedAs => {
    const who = event.context.dashboardSession as AuditedSession | undefined
    const accountId = who?.accountId ?? (event.context.dashboardAccount as string | undefined)
    return {
      credentialType: who ? 'session' : null,
      credentialId: who?.sessionId ?? null,
      accountIds: accountId ? [accountId] : [],
      crossAccount: false,
    }
  })
}

/** A public dashboard request that changed a user without a session (a password reset): its row names the account. */
export function auditDashboardAccount(event: H3Event, accountId: string) {
  event.context.dashboardAccount = accountId
}

/** Audits a public dashboard route (login, link redemption, logout) from its first step, parsing included. */
export function audited<H extends EventHandler & { __api: ApiRouteMeta }>(route: H): H {
  const wrapped = defineEventHandler((event) => {
    auditDashboard(event, useRuntime())
    return route(event)
  })
  return Object.assign(wrapped, { __api: route.__api }) as unknown as H
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1'])

/** Secure everywhere but loopback, where plain-HTTP development would otherwise lose the cookie. */
function cookieAttributes(event: H3Event, maxAge: number): string {
  const host = getRequestHost(event, { xForwardedHost: true }).toLowerCase()
  const hostname = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]
  return `HttpOnly; SameSite=Lax; Path=/; Max-Age=${maxAge}${LOOPBACK.has(hostname) ? '' : '; Secure'}`
}

/** Sets the cookie and answers the login body (password login and login links alike). */
export function startSession(event: H3Event, session: Session) {
  event.context.dashboardSession = {
    sessionId: session.sessionId,
    accountId: session.accountId,
  } satisfies AuditedSession
  appendResponseHeader(
    event,
    'Set-Cookie',
    `${SESSION_COOKIE}=${session.token}; ${cookieAttributes(event, SESSION_TTL_MS / 1000)}`,
  )
  return presentSession(session)
}

export function clearSessionCookie(event: H3Event) {
  appendResponseHeader(event, 'Set-Cookie', `${SESSION_COOKIE}=; ${cookieAttributes(event, 0)}`)
}

/**
 * Runs a sign-in attempt under the per-IP failure limiter: a client past its failures is refused before
 * the password is checked, and each 401 counts as a failure. On success the cookie is set.
 */
export async function signIn(event: H3Event, runtime: Runtime, attempt: () => Promise<Session>) {
  return startSession(event, await underFailureLimit(event, runtime, attempt))
}
