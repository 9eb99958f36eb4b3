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
import { ApiError, Errors } from '~/lib/errors'
import { list, single } from './envelope'
import { useRuntime, type Runtime } from '~/kit/runtime'
import {
  applyRateLimit,
  countAuthFailure,
  isList,
  parseBody,
  parseQuery,
  parseWith,
  rateClassOf,
  refuseIfFailureLimited,
  type ApiRouteMeta,
  type ApiRouteOptions,
} from './define-api-route'
import type { Principal } from '~/domain/credentials/principal'
import { ipAllowed } from '~/lib/ip'
import {
  lookupSession,
  presentSession,
  sessionPrincipal,
  SESSION_TTL_MS,
  type Session,
  type SessionUser,
} from '~/domain/sessions/sessions'
import { clientIp } from './client-ip'

export const SESSION_COOKIE = 'svc_session'

type ObjSchema = v.ObjectSchema<any, any> | v.StrictObjectSchema<any, any> | v.LooseObjectSchema<any, any>
type Out<S> = S extends v.GenericSchema ? v.InferOutput<S> : undefined

export interface SessionRouteContext<P, Q, B> {
  event: H3Event
  params: P
  query: Q
  body: B
  session: SessionUser
  /** Synthetic personal principal of the logged-in user (see sessionPrincipal). */
  principal: Principal
  runtime: Runtime
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
    if (!ipAllowed(clientIp(event), session.ipAllowlist))
      throw new ApiError(403, 'ip_not_allowed', 'This session does not accept requests from your IP address.')
    await applyRateLimit(event, runtime, principal, rateClassOf(opts, event))
    const params = parseWith(opts.params, getRouterParams(event, { decode: true }), 'params')
    const query = parseQuery(event, meta)
    const body = await parseBody(event, meta)
    const result = await opts.handler({ event, params, query, body, session, principal, runtime } as any)
    if (opts.status) setResponseStatus(event, opts.status)
    if (opts.status === 204) return null
    if (isList(result)) return list(event, result)
    return single(event, (result ?? {}) as object)
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
      throw new ApiError(
        401,
        'invalid_credentials',
        'Dashboard routes need a session (cookie svc_session or Authorization: Session <token> from POST /api/auth/login); API keys are not accepted here.',
      )
    return m[1]
  }
  return getCookie(event, SESSION_COOKIE) || undefined
}

async function authenticateSession(event: H3Event, runtime: Runtime): Promise<SessionUser> {
  const token = sessionToken(event)
  if (!token)
    throw new ApiError(401, 'missing_credentials', 'Log in first: POST /api/auth/login sets the svc_session cookie.')
  const found = await lookupSession(runtime.database, token)
  if (!found) {
    await countAuthFailure(event, runtime)
    throw new ApiError(401, 'invalid_credentials', 'The session is unknown, expired or logged out; log in again.')
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
  const started = Date.now()
  const path = (event.node.req.originalUrl ?? event.node.req.url ?? event.path).split('?')[0]
  event.node.res.once('finish', () => {
    const who = event.context.dashboardSession as AuditedSession | undefined
    runtime.audit.record({
      requestId: event.context.requestId,
      credentialType: who ? 'session' : null,
      credentialId: who?.sessionId ?? null,
      accountIds: who?.accountId ? [who.accountId] : [],
      crossAccount: false,
      method: event.method,
      path,
      statusCode: event.node.res.statusCode,
      errorCode: (event.context.errorCode as string | undefined) ?? null,
      ip: clientIp(event),
      userAgent: (event.node.req.headers['user-agent'] as string | undefined)?.slice(0, 512) ?? null,
      durationMs: Date.now() - started,
      createdAt: new Date(started),
    })
  })
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
  await refuseIfFailureLimited(event, runtime)
  let session: Session
  try {
    session = await attempt()
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) await countAuthFailure(event, runtime)
    throw e
  }
  return startSession(event, session)
}
