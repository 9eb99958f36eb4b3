// Dashboard sessions and one-time login links. Tokens are 32 random bytes in base64url behind a prefix;
// only their SHA-256 is stored, so a database read never yields a usable token.
import { randomBytes } from 'node:crypto'
import { and, eq, gt, isNull, sql } from 'drizzle-orm'
import type { Database } from '../../db/client'
import { loginLinks, sessions, users } from '../../db/schema'
import { ApiError, Errors } from '../../utils/api-error'
import { hashPassword, verifyPassword } from '../../utils/password'
import type { Principal } from '../credentials/principal'
import { assertOwnUser } from '../credentials/keys'
import { MASTER_ONLY, SCOPES, type Scope } from '../credentials/scopes'
import { isWellFormedToken, mintToken, sha256Hex } from '../../utils/opaque-token'

export const SESSION_PREFIX = 'svc_ses_'
export const LOGIN_LINK_PREFIX = 'svc_lnk_'
export const SESSION_TTL_MS = 12 * 3_600_000
export const LOGIN_LINK_TTL_MS = 15 * 60_000

export interface Session {
  userId: string
  accountId: string
  token: string
  expiresAt: Date
}

/** What a valid session token resolves to. */
export interface SessionUser {
  userId: string
  accountId: string
  expiresAt: Date
}


/** One message for a wrong e-mail and a wrong password, so answers do not reveal which accounts exist. */
export const invalidLogin = () => new ApiError(401, 'invalid_credentials', 'The e-mail or password is wrong.')
const invalidLink = () => new ApiError(401, 'invalid_credentials', 'The login link is unknown, expired or already used.')

export async function createSession(database: Database, user: { id: string; accountId: string }, now = new Date()): Promise<Session> {
  const token = mintToken(SESSION_PREFIX)
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS)
  await database.db.insert(sessions).values({ tokenHash: sha256Hex(token), userId: user.id, createdAt: now, expiresAt })
  return { userId: user.id, accountId: user.accountId, token, expiresAt }
}

/** Null for an unknown, expired or logged-out token, and for a suspended user (checked on every request). */
export async function resolveSession(database: Database, token: string, now = new Date()): Promise<SessionUser | null> {
  if (!isWellFormedToken(token, SESSION_PREFIX)) return null
  const [row] = await database.db
    .select({ userId: users.id, accountId: users.accountId, status: users.status, expiresAt: sessions.expiresAt })
    .from(sessions).innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, sha256Hex(token)), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))
  if (!row || row.status !== 'active') return null
  return { userId: row.userId, accountId: row.accountId, expiresAt: row.expiresAt }
}

/** Logout. Unknown or already revoked tokens are ignored: logging out twice is harmless. */
export async function revokeSession(database: Database, token: string, now = new Date()): Promise<void> {
  if (!isWellFormedToken(token, SESSION_PREFIX)) return
  await database.db.update(sessions).set({ revokedAt: now }).where(and(eq(sessions.tokenHash, sha256Hex(token)), isNull(sessions.revokedAt)))
}

// Verified against when the e-mail is unknown, so both failures cost one scrypt run.
let dummyHash: Promise<string> | undefined

export async function login(database: Database, email: string, password: string, now = new Date()): Promise<Session> {
  const [user] = await database.db
    .select({ id: users.id, accountId: users.accountId, status: users.status, passwordHash: users.passwordHash })
    .from(users).where(sql`lower(${users.email}) = lower(${email.trim()})`)
  if (!user) {
    dummyHash ??= hashPassword(randomBytes(32).toString('base64url'))
    await verifyPassword(password, await dummyHash)
    throw invalidLogin()
  }
  const ok = await verifyPassword(password, user.passwordHash)
  // A suspended user gets the same answer: the dashboard has nothing it may do.
  if (!ok || user.status !== 'active') throw invalidLogin()
  return createSession(database, user, now)
}

export async function issueLoginLink(database: Database, principal: Principal, userId: string, publicUrl: string, now = new Date()) {
  assertOwnUser(principal, userId)
  const [user] = await database.db.select({ id: users.id }).from(users).where(eq(users.id, userId))
  if (!user) throw Errors.notFound('User')
  const token = mintToken(LOGIN_LINK_PREFIX)
  const expiresAt = new Date(now.getTime() + LOGIN_LINK_TTL_MS)
  await database.db.insert(loginLinks).values({ tokenHash: sha256Hex(token), userId, createdAt: now, expiresAt })
  return { url: `${publicUrl}/api/auth/login-link?token=${token}`, token, expires_at: expiresAt.toISOString() }
}

/** Single use even under concurrent redemption: the conditional UPDATE lets exactly one caller through. */
export async function redeemLoginLink(database: Database, token: string, now = new Date()): Promise<Session> {
  if (!isWellFormedToken(token, LOGIN_LINK_PREFIX)) throw invalidLink()
  const [link] = await database.db.update(loginLinks).set({ usedAt: now })
    .where(and(eq(loginLinks.tokenHash, sha256Hex(token)), isNull(loginLinks.usedAt), gt(loginLinks.expiresAt, now)))
    .returning({ userId: loginLinks.userId })
  if (!link) throw invalidLink()
  const [user] = await database.db.select({ id: users.id, accountId: users.accountId, status: users.status }).from(users).where(eq(users.id, link.userId))
  if (!user || user.status !== 'active') throw invalidLink()
  return createSession(database, user, now)
}

export const GRANTABLE_SCOPES: readonly Scope[] = SCOPES.filter((s) => !MASTER_ONLY.includes(s))

/**
 * The acting principal of a dashboard request: the user's own personal identity holding every grantable
 * scope, so the key rules in credentials/keys.ts apply unchanged (own user only, home account only, no
 * master-only scope).
 */
export function sessionPrincipal(user: SessionUser): Principal {
  return {
    type: 'personal',
    credentialId: `session:${user.userId}`,
    userId: user.userId,
    scopes: new Set(GRANTABLE_SCOPES),
    accountIds: [user.accountId],
    homeAccountId: user.accountId,
    ipAllowlist: [],
    expiresAt: null,
  }
}

/** The login answer, shared by password login and login links. */
export function presentSession(s: Session) {
  return { user_id: s.userId, account_id: s.accountId, session_token: s.token, expires_at: s.expiresAt.toISOString() }
}
