// The authorization endpoint's logic: validate the request (client and redirect URI first, which must
// never be redirected to when wrong), then consent, which mints the connection's personal key, the grant
// and a single-use code. Pending requests are stateless: a signed, user-bound, 10-minute blob.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { and, eq, isNull, sql } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { apiKeys, oauthCodes, oauthGrants, oauthTokens } from '~/db/schema'
import { createKey } from '~/domain/credentials/keys'
import { SCOPES, type Scope } from '~/domain/credentials/scopes'
import { sessionPrincipal, type SessionUser } from '~/domain/sessions/sessions'
import { isLoopback, type ClientRow } from './clients'
import { isUrlClientId, upsertDocumentClient, type ClientLookup } from './client-document'
import { OAuthError } from './errors'
import { CONNECTION_SCOPES, DEFAULT_CONNECTION_SCOPES } from './guard'
import { canonicalResource } from './metadata'
import { mintToken, sha256Hex } from '~/lib/opaque-token'

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
  | { kind: 'page'; status: number; title: string; message: string; error?: string }
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

export async function validateAuthorizeRequest(
  lookup: ClientLookup,
  params: URLSearchParams,
  origin: string,
): Promise<AuthorizeOutcome> {
  const one = (k: string) => {
    const all = params.getAll(k)
    return all.length > 1 ? undefined : all[0]
  }
  const page = (message: string, title = 'This sign-in request is not valid') => ({
    kind: 'page' as const,
    status: 400,
    title,
    message,
  })
  for (const k of [
    'client_id',
    'redirect_uri',
    'state',
    'response_type',
    'code_challenge',
    'code_challenge_method',
    'scope',
  ]) {
    if (params.getAll(k).length > 1) return page(`The parameter ${k} is given more than once.`)
  }
  const clientId = one('client_id')
  let client: ClientRow | null
  try {
    client = clientId ? await lookup(clientId) : null
  } catch (e) {
    // A Client ID Metadata Document that cannot be fetched or is wrong: shown, never redirected (the
    // redirect_uri is not verified). rate_limited keeps its 429.
    if (!(e instanceof OAuthError)) throw e
    return {
      ...page(`The application's description could not be used. ${e.message}`),
      status: e.status === 429 ? 429 : 400,
      error: e.error,
    }
  }
  if (!client)
    return page('The application that sent you here is not registered with this service (unknown client_id).')
  const byDocument = isUrlClientId(client.id)
  let redirectUri = one('redirect_uri')
  if (!redirectUri) {
    if (client.redirectUris.length !== 1) return page('The request does not say where to return (redirect_uri).')
    redirectUri = client.redirectUris[0]
  }
  if (!client.redirectUris.some((r) => redirectUriMatches(r, redirectUri!))) {
    return {
      ...page(
        byDocument
          ? "The return address (redirect_uri) is not listed in the application's Client ID Metadata Document, so you are not sent back to it."
          : 'The return address (redirect_uri) is not one the application registered, so you are not sent back to it.',
      ),
      ...(byDocument ? { error: 'invalid_client' } : {}),
    }
  }
  const state = one('state') ?? null
  const fail = (error: string, description: string): AuthorizeOutcome => ({
    kind: 'redirect',
    location: withParams(redirectUri!, { error, error_description: description, state, iss: origin }),
  })
  if (one('response_type') !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported.')
  const challenge = one('code_challenge')
  if (!challenge)
    return fail('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.')
  if (one('code_challenge_method') !== 'S256')
    return fail('invalid_request', 'Only code_challenge_method=S256 is supported.')
  if (!/^[A-Za-z0-9_-]{43,128}$/.test(challenge))
    return fail('invalid_request', 'code_challenge must be 43 to 128 base64url characters.')
  const resources = [...new Set(params.getAll('resource').map((r) => canonicalResource(r, origin)))]
  if (resources.length > 1 || resources.includes(null))
    return fail('invalid_target', 'The resource is not served by this authorization server.')
  const resource = resources[0] ?? canonicalResource(undefined, origin)!
  const scopes = offeredScopes(one('scope'))
  if (!scopes)
    return fail(
      'invalid_scope',
      'None of the requested scopes can be granted to an OAuth connection (credentials:manage, partners:manage and master-only scopes never are).',
    )
  return {
    kind: 'ok',
    client,
    request: { clientId: client.id, redirectUri, codeChallenge: challenge, state, resource, scopes },
  }
}

/**
 * The scopes the consent screen offers. RFC 6749 §3.3 lets the server grant less than asked, and the
 * consent screen and the token's `scope` say what was granted, so: names that are not ours
 * (offline_access, mcp, openid…) are ignored; ours that a connection may never hold are dropped; a
 * request naming none of ours gets the read-only default. Only a request whose every scope of ours is
 * ungrantable is refused (null → invalid_scope): granting the default instead would surprise a client
 * that asked for something specific.
 */
export function offeredScopes(scope: string | undefined): Scope[] | null {
  const names = new Set((scope ?? '').split(' ').filter(Boolean))
  const ours = [...names].filter((s) => (SCOPES as readonly string[]).includes(s)) as Scope[]
  if (!ours.length) return [...DEFAULT_CONNECTION_SCOPES]
  const grantable = ours.filter((s) => CONNECTION_SCOPES.includes(s))
  return grantable.length ? grantable : null
}

function pendingKey(secret: string) {
  return createHash('sha256')
    .update('oauth-pending\0' + secret)
    .digest()
}

/** Who a pending request was shown to: the user, and the session (its token) that displayed the form. */
export interface PendingBinding {
  userId: string
  sessionToken: string
}

// The session token enters the MAC, not the payload: the form is bound to the session that displayed
// it (a request id seen in one session is refused in another, even of the same user) without the page
// carrying anything derived from the token.
const pendingMac = (payload: string, binding: PendingBinding, secret: string) =>
  createHmac('sha256', pendingKey(secret)).update(payload).update('\0').update(sha256Hex(binding.sessionToken)).digest()

/** The consent form's hidden request id: the validated request bound to the user and session, HMAC-signed. */
export function signPending(request: AuthRequest, binding: PendingBinding, secret: string, now = Date.now()): string {
  const payload = Buffer.from(
    JSON.stringify({ ...request, userId: binding.userId, exp: now + PENDING_TTL_MS }),
  ).toString('base64url')
  return `${payload}.${pendingMac(payload, binding, secret).toString('base64url')}`
}

export function verifyPending(
  value: string,
  binding: PendingBinding,
  secret: string,
  now = Date.now(),
): AuthRequest | null {
  const [payload, mac] = value.split('.')
  if (!payload || !mac) return null
  const expected = pendingMac(payload, binding, secret)
  const given = Buffer.from(mac, 'base64url')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null
  try {
    const data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
    if (data.userId !== binding.userId || typeof data.exp !== 'number' || data.exp < now) return null
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
export async function approve(
  database: Database,
  session: SessionUser,
  client: ClientRow,
  request: AuthRequest,
  scopes: Scope[],
  origin: string,
  now = new Date(),
): Promise<string> {
  const key = await createKey(
    database,
    sessionPrincipal(session),
    session.userId,
    {
      name: `OAuth: ${(client.clientName ?? client.id).slice(0, 80)}`,
      scopes,
      // A year, like any key; the connection's refresh tokens (90 days) end well before it.
      expires_in_days: 365,
      // The AI platform calls from its own egress addresses, which the user cannot know.
      ip_allowlist: [],
    },
    'oauth',
  )
  const code = mintToken('')
  try {
    await database.tx(async (tx) => {
      if (isUrlClientId(client.id)) await upsertDocumentClient(tx, client)
      const [grant] = await tx
        .insert(oauthGrants)
        .values({
          clientId: client.id,
          userId: session.userId,
          accountId: session.accountId,
          keyId: key.key_id,
          scopes,
          resource: request.resource,
          createdAt: now,
        })
        .returning({ id: oauthGrants.id })
      await tx.insert(oauthCodes).values({
        codeHash: sha256Hex(code),
        grantId: grant.id,
        clientId: client.id,
        redirectUri: request.redirectUri,
        codeChallenge: request.codeChallenge,
        resource: request.resource,
        scopes,
        expiresAt: new Date(now.getTime() + CODE_TTL_MS),
        createdAt: now,
      })
    })
  } catch (e) {
    // No grant points at the key: take it out again rather than leave a live orphan.
    await database.db
      .update(apiKeys)
      .set({ status: 'revoked', revokedAt: now, updatedAt: now })
      .where(eq(apiKeys.id, key.key_id))
    await database.bus.publish([`key:${key.key_id}`])
    throw e
  }
  return withParams(request.redirectUri, { code, state: request.state, iss: origin })
}

export const denyLocation = (request: AuthRequest, origin: string) =>
  withParams(request.redirectUri, {
    error: 'access_denied',
    error_description: 'The user denied the request.',
    state: request.state,
    iss: origin,
  })

/**
 * Ends a connection: the grant, every token of it, the key minted for it and every key rotated from
 * that key (a rotation hands out a working secret of the same connection), in one transaction, so the
 * next request with any of them is 401. Runs again on an already revoked grant: a disconnect retried
 * after a rotation still takes the successors.
 */
export async function revokeGrant(database: Database, grantId: string, now = new Date()): Promise<void> {
  const keyIds = await database.tx(async (tx) => {
    const [grant] = await tx
      .select({ keyId: oauthGrants.keyId })
      .from(oauthGrants)
      .where(eq(oauthGrants.id, grantId))
      .for('update')
    if (!grant) return []
    await tx
      .update(oauthGrants)
      .set({ revokedAt: now })
      .where(and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revokedAt)))
    await tx
      .update(oauthTokens)
      .set({ revokedAt: now })
      .where(and(eq(oauthTokens.grantId, grantId), isNull(oauthTokens.revokedAt)))
    // The rotation chain follows rotated_from (keys.ts rotateKey); a key may be rotated more than once
    // during its grace, so this is a tree.
    const chain = sql`${apiKeys.id} IN (WITH RECURSIVE chain(id) AS (
        SELECT r.id FROM api_keys r WHERE r.id = ${grant.keyId}
        UNION SELECT k.id FROM api_keys k JOIN chain c ON k.rotated_from = c.id
      ) SELECT id FROM chain)`
    const revoked = await tx
      .update(apiKeys)
      .set({ status: 'revoked', revokedAt: now, updatedAt: now })
      .where(and(chain, eq(apiKeys.status, 'active')))
      .returning({ id: apiKeys.id })
    return revoked.map((k) => k.id)
  })
  await database.bus.publish([`grant:${grantId}`, ...keyIds.map((id) => `key:${id}`)])
}
