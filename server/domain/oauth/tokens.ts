// The token endpoint's grants, revocation, and the credential resolver that lets an svc_at_ token act as
// its connection's personal key. Tokens are 32 random bytes behind a prefix; only SHA-256 is stored.
import { createHash } from 'node:crypto'
import { and, eq, isNull, lt, or } from 'drizzle-orm'
import type { Config } from '~/config'
import type { Database, Tx } from '~/db/client'
import { apiKeys, oauthClients, oauthCodes, oauthGrants, oauthTokens } from '~/db/schema'
import { Errors } from '~/lib/errors'
import { principalOf } from '~/domain/credentials/keys'
import type { Principal } from '~/domain/credentials/principal'
import { revokeGrant } from './authorize'
import type { ClientRow } from './clients'
import { OAuthErrors } from './errors'
import { connectionScopes } from './guard'
import { canonicalResource } from './metadata'
import { isWellFormedToken, mintToken, sha256Hex } from '~/lib/opaque-token'

export const ACCESS_PREFIX = 'svc_at_'
export const REFRESH_PREFIX = 'svc_rt_'
export const REFRESH_TTL_MS = 90 * 86_400_000

export interface TokenLifetimes {
  accessTtlMs: number
  refreshGraceMs: number
}
export const lifetimesOf = (config: Config): TokenLifetimes => ({
  accessTtlMs: config.oauthAccessTtlSeconds * 1000,
  refreshGraceMs: config.oauthRefreshGraceSeconds * 1000,
})

/**
 * A token's life starts when it is written, not when the request began: a request that waited for the
 * transaction (an embedded database busy just after a restart held a refresh 1.5 s) would otherwise hand
 * out an access token with part of its life already gone (2 s tokens expired before their first use).
 */
async function issuePair(tx: Tx, grantId: string, scopes: string[], life: TokenLifetimes) {
  const now = new Date()
  const access = mintToken(ACCESS_PREFIX)
  const refresh = mintToken(REFRESH_PREFIX)
  await tx.insert(oauthTokens).values([
    {
      tokenHash: sha256Hex(access),
      grantId,
      kind: 'access',
      scopes,
      expiresAt: new Date(now.getTime() + life.accessTtlMs),
      createdAt: now,
    },
    {
      tokenHash: sha256Hex(refresh),
      grantId,
      kind: 'refresh',
      scopes,
      expiresAt: new Date(now.getTime() + REFRESH_TTL_MS),
      createdAt: now,
    },
  ])
  await tx.update(oauthGrants).set({ lastUsedAt: now }).where(eq(oauthGrants.id, grantId))
  return {
    access_token: access,
    token_type: 'Bearer' as const,
    expires_in: Math.round(life.accessTtlMs / 1000),
    refresh_token: refresh,
    scope: scopes.join(' '),
  }
}

/** The grant is usable: not revoked, client not deleted, key still active. */
async function liveGrant(tx: Tx, grantId: string) {
  const [row] = await tx
    .select({
      grant: oauthGrants,
      keyStatus: apiKeys.status,
      keyExpiresAt: apiKeys.expiresAt,
      clientDeleted: oauthClients.deletedAt,
    })
    .from(oauthGrants)
    .innerJoin(apiKeys, eq(apiKeys.id, oauthGrants.keyId))
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .where(eq(oauthGrants.id, grantId))
  if (!row || row.grant.revokedAt || row.clientDeleted || row.keyStatus !== 'active') return null
  return row.grant
}

const verifierOk = (verifier: string, challenge: string) =>
  /^[A-Za-z0-9\-._~]{43,128}$/.test(verifier) && createHash('sha256').update(verifier).digest('base64url') === challenge

export async function exchangeCode(
  database: Database,
  client: ClientRow,
  form: Record<string, string>,
  origin: string,
  life: TokenLifetimes,
  now = new Date(),
) {
  const { code, code_verifier: verifier, redirect_uri: redirectUri } = form
  if (!code) throw OAuthErrors.invalidRequest('code is required.')
  if (!verifier) throw OAuthErrors.invalidRequest('code_verifier is required (PKCE).')
  if (!redirectUri)
    throw OAuthErrors.invalidRequest('redirect_uri is required and must equal the one of the authorization request.')
  const outcome = await database.tx(async (tx) => {
    const [row] = await tx
      .select()
      .from(oauthCodes)
      .where(eq(oauthCodes.codeHash, sha256Hex(code)))
      .for('update')
    if (!row || row.clientId !== client.id)
      return { error: OAuthErrors.invalidGrant('The authorization code is unknown or was issued to another client.') }
    if (row.usedAt) return { replayOf: row.grantId }
    // Spent by its first presentation, even a failing one: a code gets exactly one try.
    await tx.update(oauthCodes).set({ usedAt: now }).where(eq(oauthCodes.codeHash, row.codeHash))
    // The code was the only way into its grant: once it fails, the grant and its key are ended too.
    const dead = row.grantId
    if (row.expiresAt <= now) return { dead, error: OAuthErrors.invalidGrant('The authorization code has expired.') }
    if (row.redirectUri !== redirectUri)
      return { dead, error: OAuthErrors.invalidGrant('redirect_uri differs from the authorization request.') }
    if (!verifierOk(verifier, row.codeChallenge))
      return {
        dead,
        error: OAuthErrors.invalidGrant('The code_verifier does not match the code_challenge (PKCE S256).'),
      }
    if (form.resource !== undefined && canonicalResource(form.resource, origin) !== row.resource) {
      return {
        dead,
        error: OAuthErrors.invalidTarget('resource differs from the authorization request, or is not served here.'),
      }
    }
    const grant = await liveGrant(tx, row.grantId)
    if (!grant) return { error: OAuthErrors.invalidGrant('The authorization was revoked.') }
    return { tokens: await issuePair(tx, grant.id, row.scopes, life) }
  })
  if ('replayOf' in outcome) {
    // OAuth 2.1 §4.1.3: a code presented twice was probably stolen; revoke what it issued.
    await revokeGrant(database, outcome.replayOf!, now)
    throw OAuthErrors.invalidGrant('The authorization code was already used; the tokens issued from it are revoked.')
  }
  if ('error' in outcome) {
    if ('dead' in outcome && outcome.dead) await revokeGrant(database, outcome.dead, now)
    throw outcome.error
  }
  return outcome.tokens
}

/**
 * Rotation on every use. A rotated token presented again within the grace window (parallel client
 * processes sharing one stored token) mints another pair in the same grant; later, the reuse is treated
 * as theft and revokes the whole grant (RFC 9700 §4.14.2).
 */
export async function refreshTokens(
  database: Database,
  client: ClientRow,
  form: Record<string, string>,
  origin: string,
  life: TokenLifetimes,
  now = new Date(),
) {
  const token = form.refresh_token
  if (!token) throw OAuthErrors.invalidRequest('refresh_token is required.')
  if (!isWellFormedToken(token, REFRESH_PREFIX)) throw OAuthErrors.invalidGrant('The refresh token is unknown.')
  const outcome = await database.tx(async (tx) => {
    const [row] = await tx
      .select({
        token: oauthTokens,
        clientId: oauthGrants.clientId,
        grantScopes: oauthGrants.scopes,
        resource: oauthGrants.resource,
      })
      .from(oauthTokens)
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
      .where(and(eq(oauthTokens.tokenHash, sha256Hex(token)), eq(oauthTokens.kind, 'refresh')))
      .for('update', { of: oauthTokens })
    if (!row || row.clientId !== client.id)
      return { error: OAuthErrors.invalidGrant('The refresh token is unknown or belongs to another client.') }
    const t = row.token
    if (t.revokedAt) return { error: OAuthErrors.invalidGrant('The refresh token was revoked.') }
    if (t.expiresAt <= now) return { error: OAuthErrors.invalidGrant('The refresh token has expired.') }
    if (form.resource !== undefined && canonicalResource(form.resource, origin) !== row.resource) {
      return { error: OAuthErrors.invalidTarget('resource differs from the one the grant was issued for.') }
    }
    let scopes = t.scopes
    if (form.scope !== undefined && form.scope !== '') {
      const asked = [...new Set(form.scope.split(' ').filter(Boolean))]
      if (asked.some((s) => !t.scopes.includes(s)))
        return { error: OAuthErrors.invalidScope('A refresh may only narrow the granted scopes.') }
      scopes = asked
    }
    if (t.rotatedAt && now.getTime() - t.rotatedAt.getTime() > life.refreshGraceMs) return { theft: t.grantId }
    const grant = await liveGrant(tx, t.grantId)
    if (!grant) return { error: OAuthErrors.invalidGrant('The authorization was revoked.') }
    if (!t.rotatedAt) await tx.update(oauthTokens).set({ rotatedAt: now }).where(eq(oauthTokens.tokenHash, t.tokenHash))
    return { tokens: await issuePair(tx, grant.id, scopes, life) }
  })
  if ('theft' in outcome) {
    await revokeGrant(database, outcome.theft!, now)
    throw OAuthErrors.invalidGrant('The refresh token was already used; the authorization is revoked.')
  }
  if ('error' in outcome) throw outcome.error
  return outcome.tokens
}

/**
 * RFC 7009. Unknown tokens are a success (200); a refresh token ends the whole grant (and its key), an
 * access token only itself. Another client's token is refused.
 */
export async function revokeToken(
  database: Database,
  client: ClientRow,
  token: string,
  now = new Date(),
): Promise<void> {
  if (!isWellFormedToken(token, ACCESS_PREFIX) && !isWellFormedToken(token, REFRESH_PREFIX)) return
  const [row] = await database.db
    .select({ kind: oauthTokens.kind, grantId: oauthTokens.grantId, clientId: oauthGrants.clientId })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(eq(oauthTokens.tokenHash, sha256Hex(token)))
  if (!row) return
  if (row.clientId !== client.id) throw OAuthErrors.unauthorizedClient('The token was issued to another client.')
  if (row.kind === 'refresh') return revokeGrant(database, row.grantId, now)
  await database.db
    .update(oauthTokens)
    .set({ revokedAt: now })
    .where(and(eq(oauthTokens.tokenHash, sha256Hex(token)), isNull(oauthTokens.revokedAt)))
  await database.bus.publish([`tok:${sha256Hex(token)}`])
}

export interface AccessTokenInfo {
  principal: Principal
  grantId: string
  clientId: string
  resource: string
  scopes: string[]
  expiresAt: Date
}

/**
 * svc_at_ token → what it acts as. Null when unknown, revoked, its grant revoked, its client deleted or
 * its key no longer active (401 invalid_credentials); an expired token throws expired_token.
 */
export async function resolveAccessToken(
  database: Database,
  token: string,
  now = new Date(),
): Promise<AccessTokenInfo | null> {
  if (!isWellFormedToken(token, ACCESS_PREFIX)) return null
  const [row] = await database.db
    .select({ token: oauthTokens, grant: oauthGrants, key: apiKeys, clientDeleted: oauthClients.deletedAt })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .innerJoin(apiKeys, eq(apiKeys.id, oauthGrants.keyId))
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .where(and(eq(oauthTokens.tokenHash, sha256Hex(token)), eq(oauthTokens.kind, 'access')))
  if (!row || row.token.revokedAt || row.grant.revokedAt || row.clientDeleted || row.key.status !== 'active')
    return null
  if (row.token.expiresAt <= now) throw Errors.expiredToken()
  // Exactly the key's principal (scopes, accounts, ip_allowlist, key expiry and audit id), typed oauth
  // for the audit row, narrowed if a refresh narrowed the token's scopes, and never with credential or
  // partner power (a grant made before that rule may still list those scopes).
  const base = principalOf(row.key, 'oauth')
  const principal: Principal = {
    ...base,
    scopes: new Set(connectionScopes(base.scopes).filter((s) => row.token.scopes.includes(s))),
    cacheTags: [`grant:${row.grant.id}`, `client:${row.grant.clientId}`],
    validUntil: row.token.expiresAt,
  }
  // Last-used is kept coarse (5 minutes) so a busy token does not write on every request.
  database.db
    .update(oauthGrants)
    .set({ lastUsedAt: now })
    .where(
      and(
        eq(oauthGrants.id, row.grant.id),
        or(isNull(oauthGrants.lastUsedAt), lt(oauthGrants.lastUsedAt, new Date(now.getTime() - 300_000))),
      ),
    )
    .catch(() => {})
  return {
    principal,
    grantId: row.grant.id,
    clientId: row.grant.clientId,
    resource: row.grant.resource,
    scopes: [...principal.scopes],
    expiresAt: row.token.expiresAt,
  }
}

/** The credential-resolver chain entry (plugins/10.boot.ts), beside personalKeyResolver. */
export function oauthAccessTokenResolver(database: Database) {
  return async (token: string): Promise<Principal | null> =>
    (await resolveAccessToken(database, token))?.principal ?? null
}
