// The principal cache: bearer token (by its SHA-256) → the resolved principal, so an authenticated request
// costs no database round trip. An entry carries the tags of everything it was read from (its key, user,
// accounts and, for OAuth tokens, grant, client and token), and every change to one of those rows drops it
// through the database's invalidation bus (db/bus.ts): here before the changing request answers, on other
// instances within milliseconds. The TTL is only a safety net. Refusals are never cached: an unknown or
// revoked token, or a suspended tenant, reads the database every time.
import { cachePerDatabase } from '~/db/bus'
import type { Database } from '~/db/client'
import { sha256Hex } from '~/lib/opaque-token'
import type { CredentialResolver } from './authenticate'
import type { Principal } from './principal'

export const PRINCIPAL_TTL_MS = 30_000
const MAX_ENTRIES = 10_000

export const principalCache = cachePerDatabase<Principal>({ ttlMs: PRINCIPAL_TTL_MS, max: MAX_ENTRIES })

/** The tags a principal's entry is dropped by. */
export function principalTags(principal: Principal, tokenHash: string): string[] {
  const tags = [`key:${principal.credentialId}`, `tok:${tokenHash}`, ...(principal.cacheTags ?? [])]
  if (principal.userId) tags.push(`user:${principal.userId}`)
  for (const acc of new Set([...(principal.accountIds ?? []), principal.homeAccountId]))
    if (acc) tags.push(`acc:${acc}`)
  return tags
}

/** Tries the resolvers in order behind the cache. */
export function cachingResolver(database: Database, resolvers: readonly CredentialResolver[]): CredentialResolver {
  const cache = principalCache(database)
  return async (token) => {
    const hash = sha256Hex(token)
    return cache.read(
      hash,
      async () => {
        for (const resolve of resolvers) {
          const principal = await resolve(token)
          if (principal) return principal
        }
        return null
      },
      (principal) => principalTags(principal, hash),
      (principal) => principal.validUntil?.getTime(),
    )
  }
}
