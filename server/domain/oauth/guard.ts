// What an OAuth connection may hold and do (decisions, Security rules "OAuth default scopes"). An
// assistant connection is a delegated, long-lived credential held by a third party: it must never be
// able to mint, rotate or revoke credentials, nor open a dashboard session, whatever its scopes say.
import { apiError } from '~/lib/errors'
import type { Principal } from '~/domain/credentials/principal'
import type { Scope } from '~/domain/credentials/scopes'
import { GRANTABLE_SCOPES } from '~/domain/sessions/sessions'

/** Never granted to a connection: they would let it mint keys or log in as the user. */
export const NEVER_FOR_CONNECTIONS: readonly Scope[] = ['credentials:manage', 'partners:manage']

/** What consent may offer and the discovery documents advertise. */
export const CONNECTION_SCOPES: readonly Scope[] = GRANTABLE_SCOPES.filter((s) => !NEVER_FOR_CONNECTIONS.includes(s))

/** Offered when an authorization request names none of our scopes. */
export const DEFAULT_CONNECTION_SCOPES: readonly Scope[] = [
  'agents:read',
  'kb:read',
  'conversations:read',
  'summaries:read',
  'metrics:read',
]

/** Drops the scopes a connection may never use (a grant made before this rule may still carry them). */
export const connectionScopes = (scopes: Iterable<Scope>): Scope[] =>
  [...scopes].filter((s) => !NEVER_FOR_CONNECTIONS.includes(s))

/**
 * Refuses an OAuth principal (an svc_at_ token) on key issue, rotation and revocation and on login
 * links. 403 insufficient_scope: the contract's code for "this credential lacks the power for this
 * route" (there is no generic `forbidden` in its error table), and RFC 6750's name for the same thing.
 */
export function refuseOAuthPrincipal(principal: Principal, what = 'manage API keys or login links'): void {
  if (principal.type === 'oauth') {
    throw apiError('insufficient_scope', `An OAuth connection cannot ${what}; use a personal key or the dashboard.`)
  }
}
