// Password reset (decisions "Password reset"). POST /api/auth/password-reset mails a one-time link valid 30
// minutes to a dashboard user, and answers the same 202 whether or not the address is one; POST
// /api/auth/password-reset/confirm spends the link, sets the password and ends every dashboard session of
// the user. Tokens are opaque (lib/opaque-token): only their SHA-256 is stored, one live token per user.
import { and, eq, gt, sql } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { passwordResets, users } from '~/db/schema'
import type { Mailer } from '~/kit/mailer'
import type { RateLimiter } from '~/kit/rate-limit'
import { Errors, apiError } from '~/lib/errors'
import { isWellFormedToken, mintToken, sha256Hex } from '~/lib/opaque-token'
import { hashPassword } from '~/lib/password'
import { revokeUserSessions } from '~/domain/sessions/sessions'

export const RESET_PREFIX = 'svc_pwr_'
export const RESET_TTL_MS = 30 * 60_000

/**
 * Requests per hour (runtime.hourlyLimiter): per client IP, and per address whether or not it is a user's,
 * so that a 429 tells nothing about which addresses exist while one address cannot be flooded with mail.
 */
export const RESET_LIMITS = { ip: 20, address: 5 } as const

export const invalidResetToken = () =>
  apiError('invalid_token', 'The password-reset link is unknown, expired or already used; ask for a new one.', 'token')

const normalisedEmail = (email: string) => email.trim().toLowerCase()

/** Spends one request of the client's and of the address's hourly budget; past either, 429 rate_limited. */
export async function limitResetRequests(limiter: RateLimiter, ip: string, email: string): Promise<void> {
  // The address is counted by its hash: the limiter's keys (in Redis too) never hold an address.
  const budgets: [string, number][] = [
    [`pwr-ip:${ip}`, RESET_LIMITS.ip],
    [`pwr-addr:${sha256Hex(normalisedEmail(email))}`, RESET_LIMITS.address],
  ]
  for (const [key, points] of budgets) {
    const d = await limiter.consume(key, points)
    if (!d.allowed) throw Errors.rateLimited(d.retryAfter)
  }
}

export interface ResetMailer {
  database: Database
  mailer: Mailer
  /** The dashboard origin (SVC_PUBLIC_URL), which the link opens. */
  publicUrl: string
}

/**
 * For an active user with this address: a new token replaces any older one (only the newest mailed link
 * works) and the link is mailed. Anyone else: nothing at all. Answers nothing either way.
 */
export async function sendPasswordReset(deps: ResetMailer, email: string, now = new Date()): Promise<void> {
  const { database } = deps
  const [user] = await database.db
    .select({ id: users.id, email: users.email, status: users.status })
    .from(users)
    .where(sql`lower(${users.email}) = lower(${email.trim()})`)
  // A suspended user could not log in with a new password either (decisions "Suspension").
  if (!user || user.status !== 'active') return
  const token = mintToken(RESET_PREFIX)
  const row = { tokenHash: sha256Hex(token), createdAt: now, expiresAt: new Date(now.getTime() + RESET_TTL_MS) }
  await database.db
    .insert(passwordResets)
    .values({ userId: user.id, ...row })
    .onConflictDoUpdate({ target: passwordResets.userId, set: row })
  const url = `${deps.publicUrl}/api/auth/password-reset/confirm?token=${token}`
  // The mail names no account data: whoever reads it learns only that a reset was asked for this address.
  // It is platform mail (no account), so no account's GET /mail/outbox lists it, and the stored copy
  // withholds the token (MailMessage.secrets).
  await deps.mailer.send(
    {
      to: [user.email],
      subject: 'Reset your dashboard password',
      text: [
        'Someone asked to reset the dashboard password for this e-mail address.',
        '',
        `To choose a new password, open this link within 30 minutes. It works once:`,
        url,
        '',
        'If you did not ask for this, ignore this message: your password stays as it is.',
      ].join('\n'),
      secrets: [token],
      tags: { kind: 'password_reset' },
    },
    { database, accountId: null },
  )
}

// Requests are carried out after the answer, one at a time in arrival order, so that the answer's timing
// does not depend on whether the address is a user's (a lookup, a write and a mail, or a lookup alone).
// Bounded: past MAX_WAITING the request is dropped (the per-IP and per-address limits make that rare).
const MAX_WAITING = 200
let waiting = 0
let tail: Promise<void> = Promise.resolve()

export function queuePasswordReset(deps: ResetMailer, email: string): void {
  if (waiting >= MAX_WAITING) {
    console.error('[password-reset] too many requests waiting; one was dropped')
    return
  }
  waiting++
  tail = tail
    .then(() => sendPasswordReset(deps, email))
    .catch((err) =>
      console.error(`[password-reset] the request failed: ${err instanceof Error ? err.message : String(err)}`),
    )
    .finally(() => {
      waiting--
    })
}

/**
 * What every password change ends beside the old hash (a reset, PATCH /users/{usr} password): a pending
 * reset link, and every dashboard session of the user. In the changing transaction.
 */
export async function endPasswordAccess(ex: Executor, userId: string, now = new Date()): Promise<void> {
  await ex.delete(passwordResets).where(eq(passwordResets.userId, userId))
  await revokeUserSessions(ex, userId, now)
}

/** Spends the token, sets the password and ends the user's sessions. Answers whose password it was. */
export async function confirmPasswordReset(
  database: Database,
  token: string,
  password: string,
  now = new Date(),
): Promise<{ userId: string; accountId: string }> {
  if (!isWellFormedToken(token, RESET_PREFIX)) throw invalidResetToken()
  const tokenHash = sha256Hex(token)
  const live = and(eq(passwordResets.tokenHash, tokenHash), gt(passwordResets.expiresAt, now))
  // A cheap look first: scrypt (128 MiB, a large fraction of a second) runs only for a live token.
  const [found] = await database.db.select({ userId: passwordResets.userId }).from(passwordResets).where(live)
  if (!found) throw invalidResetToken()
  // Hashed before the transaction: PGlite serialises transactions.
  const passwordHash = await hashPassword(password)
  return database.tx(async (tx) => {
    // Single use under concurrent confirms: the guarded DELETE lets exactly one of them through.
    const [spent] = await tx.delete(passwordResets).where(live).returning({ userId: passwordResets.userId })
    if (!spent) throw invalidResetToken()
    const [user] = await tx
      .update(users)
      .set({ passwordHash, passwordGenerated: false, updatedAt: now })
      .where(and(eq(users.id, spent.userId), eq(users.status, 'active')))
      .returning({ id: users.id, accountId: users.accountId })
    // Suspended since the link was mailed: the token is not spent (the transaction rolls back).
    if (!user) throw invalidResetToken()
    await endPasswordAccess(tx, user.id, now)
    return { userId: user.id, accountId: user.accountId }
  })
}
