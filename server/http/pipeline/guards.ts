// Step: guards, in the order the factories run them: authenticate (with the failed-attempt limit per
// client IP), IP allowlist, expiry warning, scope, rate class.
import { getHeader, setResponseHeader, type H3Event } from 'h3'
import { authenticate, type CredentialResolver } from '~/domain/credentials/authenticate'
import { normaliseAccountId } from '~/domain/accounts/resolve'
import { personalKeyResolver, refuseSuspendedAccount, requireActiveTenant } from '~/domain/credentials/keys'
import type { Principal } from '~/domain/credentials/principal'
import { cachingResolver } from '~/domain/credentials/principal-cache'
import type { Scope } from '~/domain/credentials/scopes'
import { oauthAccessTokenResolver } from '~/domain/oauth/tokens'
import type { Database } from '~/db/client'
import { DEFAULT_RATE_LIMITS, type RateClass } from '~/kit/rate-limit'
import type { Runtime } from '~/kit/runtime'
import { ApiError, Errors, apiError } from '~/lib/errors'
import { ipAllowed } from '~/lib/ip'
import { clientIp, clientIpKey } from '../client-ip'
import type { ApiRouteMeta } from '../route-meta'

/** The class this request is metered in. */
export function rateClassOf(opts: Pick<ApiRouteMeta, 'rateClass'>, event: H3Event): RateClass {
  const rc = opts.rateClass
  if (rc === undefined) return defaultRateClass(event.method)
  return typeof rc === 'string' ? rc : rc.pick(event)
}

/** The resolver of bearer tokens other than the master key (behind the principal cache), one per database. */
const resolvers = new WeakMap<Database, CredentialResolver[]>()
function resolversFor(database: Database): CredentialResolver[] {
  let list = resolvers.get(database)
  if (!list) {
    list = [
      cachingResolver(database, [
        personalKeyResolver(database),
        requireActiveTenant(database, oauthAccessTokenResolver(database)),
      ]),
    ]
    resolvers.set(database, list)
  }
  return list
}

/** A credential or session confined to addresses answers 403 from anywhere else. */
export function requireAllowedIp(event: H3Event, allowlist: readonly string[], holder: 'key' | 'session') {
  if (!ipAllowed(clientIp(event), allowlist))
    throw apiError('ip_not_allowed', `This ${holder} does not accept requests from your IP address.`)
}

/** Within 30 days of expiry every response says how many days are left (contract, "Other rules"). */
export function warnOfExpiry(event: H3Event, principal: Principal) {
  if (!principal.expiresAt) return
  const left = principal.expiresAt.getTime() - Date.now()
  if (left <= 30 * 86_400_000)
    setResponseHeader(event, 'X-Svc-Key-Expires-In', `${Math.max(0, Math.ceil(left / 86_400_000))}d`)
}

export function defaultRateClass(method: string): RateClass {
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write'
}

/** Bearer authentication with the failed-attempt count per client IP (also used by /mcp). */
export async function authenticateRequest(event: H3Event, runtime: Runtime): Promise<Principal> {
  try {
    return await authenticate(
      getHeader(event, 'authorization'),
      runtime.config.masterKey,
      resolversFor(runtime.database),
    )
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) await countAuthFailure(event, runtime)
    throw e
  }
}

export const AUTH_FAILURES_PER_MINUTE = 20
const failureKey = (event: H3Event) => `ip:${clientIpKey(event)}`

/** Failed unauthenticated attempts are limited per client IP; past the limit they answer 429. */
export async function countAuthFailure(event: H3Event, runtime: Runtime) {
  const d = await runtime.authFailureLimiter.consume(failureKey(event), AUTH_FAILURES_PER_MINUTE)
  if (!d.allowed) throw Errors.rateLimited(d.retryAfter)
}

/** Refuses a client that has used up its failures before a password is even checked, so guessing stops. */
export async function refuseIfFailureLimited(event: H3Event, runtime: Runtime) {
  const d = await runtime.authFailureLimiter.peek(failureKey(event), AUTH_FAILURES_PER_MINUTE)
  if (!d.allowed) throw Errors.rateLimited(d.retryAfter)
}

/**
 * Runs an attempt at a secret (a password, a login link, a password-reset token) under the per-IP failure
 * limiter: a client past its failures is refused before the attempt runs, and each failure counts (by
 * default a 401; `failed` says otherwise).
 */
export async function underFailureLimit<T>(
  event: H3Event,
  runtime: Runtime,
  attempt: () => Promise<T>,
  failed: (e: ApiError) => boolean = (e) => e.status === 401,
): Promise<T> {
  await refuseIfFailureLimited(event, runtime)
  try {
    return await attempt()
  } catch (e) {
    if (e instanceof ApiError && failed(e)) await countAuthFailure(event, runtime)
    throw e
  }
}

/**
 * A partner key naming a suspended member's tenant in the path (/accounts/{acc}/…, /users/{usr}/…) is refused
 * with 403 account_suspended, as the member's own keys are (decisions "Abuse and cost (issue 30)"); the
 * account_id and X-Svc-Account ways are refused by resolveAccount.
 */
export function refuseSuspendedMemberParams(principal: Principal, params: unknown, opts: ApiRouteMeta) {
  if (!principal.suspendedAccountIds?.length || opts.readsSuspendedMembers) return
  if (!params || typeof params !== 'object') return
  for (const key of ['acc', 'usr']) {
    const raw = (params as Record<string, unknown>)[key]
    if (typeof raw === 'string') refuseSuspendedAccount(principal, normaliseAccountId(raw))
  }
}

export function requireScope(principal: Principal, opts: ApiRouteMeta) {
  // The master key acts for one account on data routes (contract "Account resolution"): it has none of
  // their scopes, so the X-Svc-Account rule (403 forbidden_account without it) decides instead.
  if (principal.type === 'master' && opts.dataRoute) return
  const wanted = [opts.scope, ...(opts.anyScope ?? [])].filter(Boolean) as Scope[]
  if (wanted.length && !wanted.some((s) => principal.scopes.has(s))) throw Errors.insufficientScope(wanted.join(' or '))
}

/** Spends one point of `rateClass` for `subject`: a credential's id, or what a public route counts per
 *  (ApiRouteOptions.rateSubjects). */
export async function applyRateLimit(event: H3Event, runtime: Runtime, subject: string, rateClass: RateClass) {
  const limit = runtime.config.rateLimits[rateClass] ?? DEFAULT_RATE_LIMITS[rateClass]
  const d = await runtime.rateLimiter.consume(`${subject}:${rateClass}`, limit)
  setResponseHeader(event, 'X-RateLimit-Limit', String(d.limit))
  setResponseHeader(event, 'X-RateLimit-Remaining', String(d.remaining))
  setResponseHeader(event, 'X-RateLimit-Reset', String(d.resetEpoch))
  // The IETF fields beside them (draft-ietf-httpapi-ratelimit-headers): policy quota and window, and
  // what is left with the seconds until the window resets.
  const reset = Math.max(0, d.resetEpoch - Math.floor(Date.now() / 1000))
  setResponseHeader(event, 'RateLimit-Policy', `"${rateClass}";q=${d.limit};w=60`)
  setResponseHeader(event, 'RateLimit', `"${rateClass}";r=${d.remaining};t=${reset}`)
  if (!d.allowed) throw Errors.rateLimited(d.retryAfter)
}
