// The authorization endpoint's logic: validate the request (client and redirect URI first, which must
// never be redirected to when wrong), then consent, which mints the connection's personal key, the grant
// and a single-use code. Pending requests are stateless: a signed, user-bound, 10-minute blob.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { and, eq, isNull } from 'drizzle-orm'
import type { Database } from '../../db/client'
import { apiKeys, oauthCodes, oauthGrants, oauthTokens } from '../../db/schema'
import { createKey } from '../credentials/keys'
import type { Scope } from '../credentials/scopes'
import { GRANTABLE_SCOPES, sessionPrincipal, type SessionUser } from '../sessions/sessions'
import { findClient, isLoopback, type ClientRow } from './clients'
import { canonicalResource } from './metadata'
import { mintToken, sha256Hex } from '../../utils/opaque-token'

export const CODE_TTL_MS = 5 * 60_000
const PENDING_TTL_MS = 10 * 60_000

export interface AuthRequest {
  clientId: string
  redirectUri: string
  codeChallenge: string
  state: string | null
  resource: string
  /** Scopes offered on the consent screen (the request's known scopes, or every grantable one). */
  scopes: Scope[]
}

export type AuthorizeOutcome =
  | { kind: 'page'; status: number; title: string; message: string }
  | { kind: 'redirect'; location: string }
  | { kind: 'ok'; request: AuthRequest; client: ClientRow }

/** redirect_uri with the response parameters appended (it may already carry a query). */
export function withParams(redirectUri: string, params: Record<string, string | null | undefined>): string {
  const url = new URL(redirectUri)
  for (const [k, val] of Object.entries(params)) if (val !== null && val !== undefined) url.searchParams.append(k, val)
  return url.toString()
}

/** Exact match, except that loopback redirect URIs match on any port (RFC 8252 §7.3). */
export function redirectUriMatches(registered: string, requested: string): boolean {
  if (registered === requested) return true
  let a: URL, b: URL
  try {
    a = new URL(registered)
    b = new URL(requested)
  } catch {
    return false
  }
  if (!isLoopback(a) || !isLoopback(b)) return false
  return a.hostname === b.hostname && a.pathname === b.pathname && a.search === b.search && !b.hash
}

export async function validateAuthorizeRequest(database: Database, params: URLSearchParams, origin: string): Promise<AuthorizeOutcome> {
  const one = (k: string) => {
    const all = params.getAll(k)
    return all.length > 1 ? undefined : all[0]
  }
  const page = (message: string, title = 'This sign-in request is not valid') => ({ kind: 'page' as const, status: 400, title, message })
  for (const k of ['client_id', 'redirect_uri', 'state', 'response_type', 'code_challenge', 'code_challenge_method', 'scope']) {
    if (params.getAll(k).length > 1) return page(`The parameter ${k} is given more than once.`)
  }
  const clientId = one('client_id')
  const client = clientId ? await findClient(database, clientId) : null
  if (!client) return page('The application that sent you here is not registered with this service (unknown client_id).')
  let redirectUri = one('redirect_uri')
  if (!redirectUri) {
    if (client.redirectUris.length !== 1) return page('The request does not say where to return (redirect_uri).')
    redirectUri = client.redirectUris[0]
  }
  if (!client.redirectUris.some((r) => redirectUriMatches(r, redirectUri!))) {
    return page('The return address (redirect_uri) is not one the application registered, so you are not sent back to it.')
  }
  const state = one('state') ?? null
  const fail = (error: string, description: string): AuthorizeOutcome =>
    ({ kind: 'redirect', location: withParams(redirectUri!, { error, error_description: description, state, iss: origin }) })
  if (one('response_type') !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported.')
  const challenge = one('code_challenge')
  if (!challenge) return fail('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.')
  if (one('code_challenge_method') !== 'S256') return fail('invalid_request', 'Only code_challenge_method=S256 is supported.')
  if (!/^[A-Za-z0-9_-]{43,128}$/.test(challenge)) return fail('invalid_request', 'code_challenge must be 43 to 128 base64url characters.')
  const resources = [...new Set(params.getAll('resource').map((r) => canonicalResource(r, origin)))]
  if (resources.length > 1 || resources.includes(null)) return fail('invalid_target', 'The resource is not served by this authorization server.')
  const resource = resources[0] ?? canonicalResource(undefined, origin)!
  // Unknown scope names (offline_access, mcp, openid…) are ignored rather than refused: the consent
  // screen and the token's `scope` say what was granted (RFC 6749 §3.3).
  const asked = (one('scope') ?? '').split(' ').filter((s) => (GRANTABLE_SCOPES as readonly string[]).includes(s)) as Scope[]
  const scopes = asked.length ? [...new Set(asked)] : [...GRANTABLE_SCOPES]
  return { kind: 'ok', client, request: { clientId: client.id, redirectUri, codeChallenge: challenge, state, resource, scopes } }
}

function pendingKey(secret: string) {
  return createHash('sha256').update('oauth-pending\0' + secret).digest()
}

/** The consent form's hidden request id: the validated request bound to the user, HMAC-signed. */
export function signPending(request: AuthRequest, userId: string, secret: string, now = Date.now()): string {
  const payload = Buffer.from(JSON.stringify({ ...request, userId, exp: now + PENDING_TTL_MS })).toString('base64url')
  const mac = createHmac('sha256', pendingKey(secret)).update(payload).digest('base64url')
  return `${payload}.${mac}`
}

export function verifyPending(value: string, userId: string, secret: string, now = Date.now()): AuthRequest | null {
  const [payload, mac] = value.split('.')
  if (!payload || !mac) return null
  const expected = createHmac('sha256', pendingKey(secret)).update(payload).digest()
  const given = Buffer.from(mac, 'base64url')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null
  try {
    const data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
    if (data.userId !== userId || typeof data.exp !== 'number' || data.exp < now) return null
    const { userId: _u, exp: _e, ...request } = data
    return request as AuthRequest
  } catch {
    return null
  }
}

/**
 * Approval: the connection's personal key (approved scopes, the user's home account, source oauth)
 * through the same createKey as every other key, then the grant and a 5-minute code in one transaction.
 */
export async function approve(database: Database, session: SessionUser, client: ClientRow, request: AuthRequest, scopes: Scope[], origin: string, now = new Date()): Promise<string> {
  const key = await createKey(database, sessionPrincipal(session), session.userId, {
    name: `OAuth: ${(client.clientName ?? client.id).slice(0, 80)}`,
    scopes,
    // A year, like any key; the connection's refresh tokens (90 days) end well before it.
    expires_in_days: 365,
    // The AI platform calls from its own egress addresses, which the user cannot know.
    ip_allowlist: [],
  }, 'oauth')
  const code = mintToken('')
  try {
    await database.tx(async (tx) => {
      const [grant] = await tx.insert(oauthGrants).values({
        clientId: client.id, userId: session.userId, accountId: session.accountId, keyId: key.key_id, scopes, resource: request.resource, createdAt: now,
      }).returning({ id: oauthGrants.id })
      await tx.insert(oauthCodes).values({
        codeHash: sha256Hex(code), grantId: grant.id, clientId: client.id, redirectUri: request.redirectUri, codeChallenge: request.codeChallenge,
        resource: request.resource, scopes, expiresAt: new Date(now.getTime() + CODE_TTL_MS), createdAt: now,
      })
    })
  } catch (e) {
    // No grant points at the key: take it out again rather than leave a live orphan.
    await database.db.update(apiKeys).set({ status: 'revoked', revokedAt: now, updatedAt: now }).where(eq(apiKeys.id, key.key_id))
    throw e
  }
  return withParams(request.redirectUri, { code, state: request.state, iss: origin })
}

export const denyLocation = (request: AuthRequest, origin: string) =>
  withParams(request.redirectUri, { error: 'access_denied', error_description: 'The user denied the request.', state: request.state, iss: origin })

/**
 * Ends a connection: the grant, every token of it and the key minted for it, in one transaction, so
 * the next request with any of its tokens is 401.
 */
export async function revokeGrant(database: Database, grantId: string, now = new Date()): Promise<void> {
  await database.tx(async (tx) => {
    const [grant] = await tx.update(oauthGrants).set({ revokedAt: now })
      .where(and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revokedAt))).returning({ keyId: oauthGrants.keyId })
    await tx.update(oauthTokens).set({ revokedAt: now }).where(and(eq(oauthTokens.grantId, grantId), isNull(oauthTokens.revokedAt)))
    if (grant) {
      await tx.update(apiKeys).set({ status: 'revoked', revokedAt: now, updatedAt: now })
        .where(and(eq(apiKeys.id, grant.keyId), eq(apiKeys.status, 'active')))
    }
  })
}
