// Bearer authentication. The master key is compared in constant time and never touches the database.
import { createHash, timingSafeEqual } from 'node:crypto'
import { Errors } from '~/lib/errors'
import type { Principal } from './principal'
import { MASTER_SCOPES } from './scopes'

export interface CredentialResolver {
  /** Answers the principal for a personal key or OAuth token, or null when unknown. */
  (token: string): Promise<Principal | null>
}

const sha256 = (s: string) => createHash('sha256').update(s).digest()

export function bearerToken(header: string | undefined): string {
  const m = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null
  if (!m) throw Errors.missingCredentials()
  return m[1]
}

export function masterPrincipal(): Principal {
  return {
    type: 'master',
    credentialId: 'master',
    userId: null,
    scopes: new Set(MASTER_SCOPES),
    accountIds: null,
    homeAccountId: null,
    ipAllowlist: [],
    expiresAt: null,
  }
}

export async function authenticate(
  authorization: string | undefined,
  masterKey: string,
  resolvers: readonly CredentialResolver[],
): Promise<Principal> {
  const token = bearerToken(authorization)
  if (token.startsWith('svc_mk_live_')) {
    if (timingSafeEqual(sha256(token), sha256(masterKey))) return masterPrincipal()
    throw Errors.invalidCredentials()
  }
  for (const resolve of resolvers) {
    const principal = await resolve(token)
    if (principal) {
      if (principal.expiresAt && principal.expiresAt.getTime() <= Date.now()) throw Errors.expiredToken()
      return principal
    }
  }
  throw Errors.invalidCredentials()
}
