import type { Scope } from './scopes'

/** Who is calling, resolved once per request by defineApiRoute. */
export interface Principal {
  type: 'master' | 'personal' | 'oauth'
  /** key_<n>, or the literal "master". */
  credentialId: string
  userId: string | null
  scopes: ReadonlySet<Scope>
  /** Accounts the credential may act for; null for the master key (any account). */
  accountIds: readonly string[] | null
  homeAccountId: string | null
  /**
   * A partners:manage key: the accounts of its partner's members (POST /partners/members), also listed in
   * accountIds. Acting for one of them is audited cross_account.
   */
  memberAccountIds?: readonly string[]
  /**
   * Members' accounts (among memberAccountIds) whose user or account is suspended: listed in accountIds (so
   * their cache tags drop the principal when the status changes) but refused with 403 account_suspended.
   */
  suspendedAccountIds?: readonly string[]
  ipAllowlist: readonly string[]
  expiresAt: Date | null
  /** Cache tags beyond key, user and accounts (an OAuth token: its grant and client). */
  cacheTags?: readonly string[]
  /** The principal may be cached until then at most (an OAuth access token's expiry). */
  validUntil?: Date
}
