// Dashboard sessions and one-time login links. Tokens are 32 random bytes in base64url behind a prefix;
// only their SHA-256 is stored, so a database read never yields a usable token.
import { randomBytes } from 'node:crypto'
import { and, eq, gt, isNull, sql } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { accounts, loginLinks, sessions, users } from '~/db/schema'
import { Errors, apiError } from '~/lib/errors'
import { hashPassword, needsRehash, verifyPassword } from '~/lib/password'
import type { Principal } from '~/domain/credentials/principal'
import { isSuspended } from '~/domain/credentials/keys'
import { MASTER_ONLY, SCOPES, type Scope } from '~/domain/credentials/scopes'
import { isWellFormedToken, mintToken, sha256Hex } from '~/lib/opaque-token'

export const SESSION_PREFIX = 'svc_ses_'
export const LOGIN_LINK_PREFIX = 'svc_lnk_'
export const SESSION_TTL_MS = 12 * 3_600_000
export const LOGIN_LINK_TTL_MS = 15 * 60_000

export interface Session {
  sessionId: string
  userId: string
  accountId: string
  token: string
  expiresAt: Date
}

/**
 * What a session may do at most (decisions "Login links"): the scopes and ip_allowlist of the credential
 * that issued its login link. Null scopes (a password login): every grantable scope but partners:manage
 * (SESSION_SCOPES); a master-key link stores every grantable scope.
 */
export interface Ceiling {
  scopes: Scope[] | null
  ipAllowlist: string[]
}

export const NO_CEILING: Ceiling = { scopes: null, ipAllowlist: [] }

/** What a valid session token resolves to. */
export interface SessionUser extends Ceiling {
  /** ses_ + 16 hex characters of the token's hash: names the session in audit rows, never usable as a token. */
  sessionId: string
  userId: string
  accountId: string
  expiresAt: Date
}

export const sessionIdOf = (tokenHash: string) => `ses_${tokenHash.slice(0, 16)}`

/** One message for a wrong e-mail and a wrong password, so answers do not reveal which accounts exist. */
export const invalidLogin = () => apiError('invalid_credentials', 'The e-mail or password is wrong.')
export const invalidLink = () => apiError('invalid_credentials', 'The login link is unknown, expired or already used.')

export async function createSession(
  database: Database,
  user: { id: string; accountId: string },
  ceiling: Ceiling = NO_CEILING,
  now = new Date(),
): Promise<Session> {
  const token = mintToken(SESSION_PREFIX)
  const tokenHash = sha256Hex(token)
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS)
  await database.db.insert(sessions).values({
    tokenHash,
    userId: user.id,
    createdAt: now,
    expiresAt,
    scopes: ceiling.scopes,
    ipAllowlist: ceiling.ipAllowlist,
  })
  return { sessionId: sessionIdOf(tokenHash), userId: user.id, accountId: user.accountId, token, expiresAt }
}

/**
 * Null for an unknown, expired or logged-out token. A session of a suspended user or account resolves with
 * `suspended` set (the dashboard answers 403 account_suspended); the statuses come in the same query.
 */
export async function lookupSession(
  database: Database,
  token: string,
  now = new Date(),
): Promise<{ session: SessionUser; suspended: boolean } | null> {
  if (!isWellFormedToken(token, SESSION_PREFIX)) return null
  const tokenHash = sha256Hex(token)
  const [row] = await database.db
    .select({
      userId: users.id,
      accountId: users.accountId,
      userStatus: users.status,
      accountStatus: accounts.status,
      expiresAt: sessions.expiresAt,
      scopes: sessions.scopes,
      ipAllowlist: sessions.ipAllowlist,
    })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .innerJoin(accounts, eq(accounts.id, users.accountId))
    .where(and(eq(sessions.tokenHash, tokenHash), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))
  if (!row) return null
  return {
    session: {
      sessionId: sessionIdOf(tokenHash),
      userId: row.userId,
      accountId: row.accountId,
      expiresAt: row.expiresAt,
      scopes: row.scopes as Scope[] | null,
      ipAllowlist: row.ipAllowlist,
    },
    suspended: isSuspended(row.userStatus, row.accountStatus),
  }
}

/** Null for an unknown, expired or logged-out token, and for a suspended user or account. */
export async function resolveSession(database: Database, token: string, now = new Date()): Promise<SessionUser | null> {
  const found = await lookupSession(database, token, now)
  return found && !found.suspended ? found.session : null
}

/** Logout. Unknown or already revoked tokens are ignored: logging out twice is harmless. Answers who logged out. */
export async function revokeSession(
  database: Database,
  token: string,
  now = new Date(),
): Promise<{ sessionId: string; accountId: string } | null> {
  if (!isWellFormedToken(token, SESSION_PREFIX)) return null
  const tokenHash = sha256Hex(token)
  const [row] = await database.db
    .update(sessions)
    .set({ revokedAt: now })
    .where(and(eq(sessions.tokenHash, tokenHash), isNull(sessions.revokedAt)))
    .returning({ userId: sessions.userId })
  if (!row) return null
  const [user] = await database.db.select({ accountId: users.accountId }).from(users).where(eq(users.id, row.userId))
  return { sessionId: sessionIdOf(tokenHash), accountId: user?.accountId ?? '' }
}

/**
 * Ends every live dashboard session of a user (a password change: decisions "Password reset"), inside the
 * caller's transaction. Answers how many ended.
 */
export async function revokeUserSessions(ex: Executor, userId: string, now = new Date()): Promise<number> {
  const ended = await ex
    .update(sessions)
    .set({ revokedAt: now })
    .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt)))
    .returning({ tokenHash: sessions.tokenHash })
  return ended.length
}

// Verified against when the e-mail is unknown, so both failures cost one scrypt run.
let dummyHash: Promise<string> | undefined

export async function login(database: Database, email: string, password: string, now = new Date()): Promise<Session> {
  const [user] = await database.db
    .select({ id: users.id, accountId: users.accountId, status: users.status, passwordHash: users.passwordHash })
    .from(users)
    .where(sql`lower(${users.email}) = lower(${email.trim()})`)
  if (!user) {
    dummyHash ??= hashPassword(randomBytes(32).toString('base64url'))
    await verifyPassword(password, await dummyHash)
    throw invalidLogin()
  }
  const ok = await verifyPassword(password, user.passwordHash)
  // A suspended user gets the same answer: the dashboard has nothing it may do.
  if (!ok || user.status !== 'active') throw invalidLogin()
  if (needsRehash(user.passwordHash)) await upgradeHash(database, user.id, user.passwordHash, password)
  return createSession(database, user, NO_CEILING, now)
}

/**
 * Re-hashes a password stored with older, weaker scrypt parameters, now that the plain text is at hand.
 * Conditional on the old hash, so a password changed meanwhile is never overwritten.
 */
async function upgradeHash(database: Database, userId: string, oldHash: string, password: string) {
  const passwordHash = await hashPassword(password)
  await database.db
    .update(users)
    .set({ passwordHash })
    .where(and(eq(users.id, userId), eq(users.passwordHash, oldHash)))
}

const linkRefused = (message: string) => Errors.forbiddenAccount(message)

/**
 * Who may issue a link for whom (decisions "Login links"), and the ceiling the link carries. The master key:
 * any user, every grantable scope. A partners:manage key: only its partner members' users, never its own,
 * and at most its own scopes and ip_allowlist. An OAuth connection: never (decisions "OAuth default scopes").
 */
export async function authorizeLoginLink(database: Database, principal: Principal, userId: string): Promise<Ceiling> {
  if (principal.type === 'oauth') {
    throw apiError(
      'insufficient_scope',
      'An OAuth connection cannot issue login links; use the master key or a partner key.',
    )
  }
  if (principal.type === 'master') {
    const [user] = await database.db.select({ id: users.id }).from(users).where(eq(users.id, userId))
    if (!user) throw Errors.notFound('User')
    return MASTER_LINK_CEILING
  }
  if (principal.userId === userId) {
    throw linkRefused(
      'A key cannot issue a login link for its own user: that would open a session beyond the key itself.',
    )
  }
  // Only the partner's own members (users.partner_id); a user of another tenant, existing or not, gets the
  // same answer, so it does not reveal which user ids exist.
  const [member] = principal.scopes.has('partners:manage')
    ? await database.db
        .select({ id: users.id })
        .from(users)
        .where(and(eq(users.id, userId), eq(users.partnerId, principal.userId ?? '')))
    : []
  if (!member)
    throw linkRefused('A partners:manage key may issue login links only for the users of its partner members.')
  return ceilingOf(principal)
}

/**
 * The ceiling a principal hands on: its scopes and its ip_allowlist. A partner's link for its member never
 * carries partners:manage: a member is not a partner.
 */
export function ceilingOf(principal: Principal): Ceiling {
  if (principal.type === 'master') return MASTER_LINK_CEILING
  return { scopes: SESSION_SCOPES.filter((s) => principal.scopes.has(s)), ipAllowlist: [...principal.ipAllowlist] }
}

export async function issueLoginLink(
  database: Database,
  principal: Principal,
  userId: string,
  publicUrl: string,
  now = new Date(),
) {
  const ceiling = await authorizeLoginLink(database, principal, userId)
  return createLoginLink(database, userId, ceiling, publicUrl, now)
}

/** Stores a link carrying `ceiling`; the caller has decided who may issue it. */
export async function createLoginLink(
  database: Database,
  userId: string,
  ceiling: Ceiling,
  publicUrl: string,
  now = new Date(),
) {
  const token = mintToken(LOGIN_LINK_PREFIX)
  const expiresAt = new Date(now.getTime() + LOGIN_LINK_TTL_MS)
  await database.db.insert(loginLinks).values({
    tokenHash: sha256Hex(token),
    userId,
    createdAt: now,
    expiresAt,
    scopes: ceiling.scopes,
    ipAllowlist: ceiling.ipAllowlist,
  })
  return { url: `${publicUrl}/api/auth/login-link?token=${token}`, token, expires_at: expiresAt.toISOString() }
}

/** Single use even under concurrent redemption: the conditional UPDATE lets exactly one caller through. */
export async function redeemLoginLink(database: Database, token: string, now = new Date()): Promise<Session> {
  if (!isWellFormedToken(token, LOGIN_LINK_PREFIX)) throw invalidLink()
  const [link] = await database.db
    .update(loginLinks)
    .set({ usedAt: now })
    .where(and(eq(loginLinks.tokenHash, sha256Hex(token)), isNull(loginLinks.usedAt), gt(loginLinks.expiresAt, now)))
    .returning({ userId: loginLinks.userId, scopes: loginLinks.scopes, ipAllowlist: loginLinks.ipAllowlist })
  if (!link) throw invalidLink()
  const [user] = await database.db
    .select({ id: users.id, accountId: users.accountId, status: users.status })
    .from(users)
    .where(eq(users.id, link.userId))
  if (!user || user.status !== 'active') throw invalidLink()
  return createSession(database, user, { scopes: link.scopes as Scope[] | null, ipAllowlist: link.ipAllowlist }, now)
}

export const GRANTABLE_SCOPES: readonly Scope[] = SCOPES.filter((s) => !MASTER_ONLY.includes(s))

/**
 * What a session without a ceiling (a password login) holds: every grantable scope but partners:manage, so
 * that no user makes itself a partner from the dashboard (decisions "Partners (issue 18)"). Only the master
 * key confers it: on a key it issues, or through a login link it issues (MASTER_LINK_CEILING).
 */
export const SESSION_SCOPES: readonly Scope[] = GRANTABLE_SCOPES.filter((s) => s !== 'partners:manage')

/** A master-key link: every grantable scope, partners:manage included, no ip_allowlist. */
const MASTER_LINK_CEILING: Ceiling = { scopes: [...GRANTABLE_SCOPES], ipAllowlist: [] }

/**
 * The acting principal of a dashboard request: the user's own personal identity holding the session's
 * scopes (every grantable one unless a login link's ceiling narrowed them) and ip_allowlist, so the key
 * rules in credentials/keys.ts apply unchanged (own user only, home account only, no master-only scope,
 * no scope or address beyond the session's own).
 */
export function sessionPrincipal(user: SessionUser): Principal {
  return {
    type: 'personal',
    credentialId: `session:${user.userId}`,
    userId: user.userId,
    scopes: new Set(user.scopes ? GRANTABLE_SCOPES.filter((s) => user.scopes!.includes(s)) : SESSION_SCOPES),
    accountIds: [user.accountId],
    homeAccountId: user.accountId,
    ipAllowlist: user.ipAllowlist,
    expiresAt: null,
  }
}

/** The login answer, shared by password login and login links. */
export function presentSession(s: Session) {
  return { user_id: s.userId, account_id: s.accountId, session_token: s.token, expires_at: s.expiresAt.toISOString() }
}
