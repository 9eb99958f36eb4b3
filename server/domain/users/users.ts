// Tenants: one transaction creates the user, its account (same number) and its subscription.
import { randomBytes } from 'node:crypto'
import { and, desc, eq, gt, sql, type SQL } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { rowsOf } from '~/db/client'
import { accounts, subscriptions, users } from '~/db/schema'
import { Errors, apiError } from '~/lib/errors'
import { isUniqueViolation } from '~/lib/db-errors'
import { hashPassword } from '~/lib/password'
import type { KeysetRequest } from '~/lib/keyset'
import { afterPosition, keysetPage, mergeKeys } from '~/lib/keyset'
import type { User, UserCreate, UserPatch } from './schemas'
import { planTerms, TRIAL_DAYS } from '~/domain/limits/plans'
import type { Principal } from '~/domain/credentials/principal'
import { endPasswordAccess } from './password-reset'

type UserRow = typeof users.$inferSelect
type AccountRow = typeof accounts.$inferSelect

export function present(u: UserRow, a: AccountRow): User {
  return {
    user_id: u.id,
    account_id: a.id,
    partner_id: u.partnerId,
    email: u.email,
    name: u.name,
    plan: a.plan as User['plan'],
    plan_expires_at: a.planExpiresAt?.toISOString() ?? null,
    company_name: u.companyName,
    language: u.language,
    timezone: u.timezone,
    currency_code: u.currencyCode,
    external_ids: u.externalIds,
    status: u.status as User['status'],
    limits: u.limits,
    transcript_retention_days: a.transcriptRetentionDays,
    created_at: u.createdAt.toISOString(),
    updated_at: u.updatedAt.toISOString(),
  }
}

/**
 * `partnerId`: the partner (POST /partners/members) whose member this user becomes. Its cached principals
 * list their members' accounts, so the same transaction tells every instance to drop them (an INSERT fires
 * no invalidation trigger); the caller publishes `user:<partner>` here once it commits.
 */
export async function createUser(
  database: Database,
  input: UserCreate,
  opts: { partnerId?: string } = {},
): Promise<User> {
  // A partner over its daily members is refused before the hash (checked again, locked, in the transaction).
  if (opts.partnerId) await takePartnerMember(database.db, opts.partnerId, new Date(), false)
  // Hash before the transaction: scrypt takes ~100 ms and PGlite serialises transactions.
  const passwordHash = await hashPassword(input.password ?? randomBytes(32).toString('base64url'))
  try {
    return await database.tx(async (tx) => {
      const now = new Date()
      if (opts.partnerId) await takePartnerMember(tx, opts.partnerId, now)
      const [{ n }] = rowsOf<{ n: string }>(await tx.execute(sql`SELECT nextval('tenant_seq')::text AS n`))
      const [account] = await tx
        .insert(accounts)
        .values({
          id: `acc_${n}`,
          name: input.company_name ?? input.name ?? input.email,
          plan: input.plan,
          planExpiresAt: input.plan === 'trial' ? new Date(now.getTime() + TRIAL_DAYS * 86_400_000) : null,
          createdAt: now,
          updatedAt: now,
        })
        .returning()
      const [user] = await tx
        .insert(users)
        .values({
          id: `usr_${n}`,
          accountId: account.id,
          email: input.email,
          name: input.name ?? null,
          companyName: input.company_name ?? null,
          language: input.language ?? null,
          timezone: input.timezone ?? null,
          currencyCode: input.currency_code,
          externalIds: input.external_ids ?? {},
          passwordHash,
          passwordGenerated: input.password === undefined,
          partnerId: opts.partnerId ?? null,
          createdAt: now,
          updatedAt: now,
        })
        .returning()
      await tx.insert(subscriptions).values({
        accountId: account.id,
        plan: input.plan,
        planLimit: planTerms(input.plan).price,
        createdAt: now,
        updatedAt: now,
      })
      if (opts.partnerId) await tx.execute(sql`SELECT svc_invalidate(ARRAY[${`user:${opts.partnerId}`}::text])`)
      return present(user, account)
    })
  } catch (err) {
    if (isUniqueViolation(err)) throw apiError('email_exists', 'A user with this email already exists.', 'email')
    throw err
  }
}

/** A partner creates at most this many members per UTC day (decisions, Security rules "Calls cost money"). */
export const PARTNER_MEMBERS_PER_DAY = 50

/**
 * Inside the creating transaction: 429 quota_exceeded (Retry-After to 00:00 UTC) when the partner has created
 * PARTNER_MEMBERS_PER_DAY members today. Counted from the members' rows under a per-partner lock, so two
 * concurrent creates cannot both take the last one and a create that fails (a taken email) costs nothing.
 */
async function takePartnerMember(tx: Executor, partnerId: string, now: Date, lock = true) {
  if (lock) await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`partner-members:${partnerId}`}))`)
  const dayStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()))
  const [{ n }] = rowsOf<{ n: number }>(
    await tx.execute(sql`SELECT count(*)::int AS n FROM users
      WHERE partner_id = ${partnerId} AND created_at >= ${dayStart.toISOString()}::timestamptz`),
  )
  if (Number(n) < PARTNER_MEMBERS_PER_DAY) return
  const reset = new Date(dayStart.getTime() + 86_400_000)
  throw apiError(
    'quota_exceeded',
    `A partner creates at most ${PARTNER_MEMBERS_PER_DAY} members a day; the count resets at ${reset.toISOString()}.`,
    null,
    { 'Retry-After': String(Math.max(1, Math.ceil((reset.getTime() - now.getTime()) / 1000))) },
  )
}

/** The one user (with its account) that `cond` selects, else 404 naming `what`. */
export async function findUser(database: Database, cond: SQL | undefined, what = 'User'): Promise<User> {
  const [row] = await database.db.select().from(users).innerJoin(accounts, eq(accounts.id, users.accountId)).where(cond)
  if (!row) throw Errors.notFound(what)
  return present(row.users, row.accounts)
}

export const getUser = (database: Database, id: string): Promise<User> => findUser(database, eq(users.id, id))

/** Users (with their accounts) where `conds` hold, newest first, keyset on (created_at, id). */
export async function pageUsers(database: Database, conds: (SQL | undefined)[], page: KeysetRequest) {
  const where = [...conds, afterPosition(page, users.createdAt, users.id)].filter((c): c is SQL => !!c)
  const rows = await database.db
    .select()
    .from(users)
    .innerJoin(accounts, eq(accounts.id, users.accountId))
    .where(where.length ? and(...where) : undefined)
    .orderBy(desc(users.createdAt), desc(users.id))
    .limit(page.binding.limit + 1)
  return keysetPage(
    page,
    rows,
    (r) => [r.users.createdAt.toISOString(), r.users.id],
    (r) => present(r.users, r.accounts),
  )
}

export async function listUsers(
  database: Database,
  filters: { status?: string; updated_since?: string },
  page: KeysetRequest,
) {
  return pageUsers(
    database,
    [
      filters.status ? eq(users.status, filters.status) : undefined,
      filters.updated_since ? gt(users.updatedAt, new Date(filters.updated_since)) : undefined,
    ],
    page,
  )
}

/**
 * Who may patch whom (decisions "Password reset"): the master key any user and every field; any other
 * principal here holds partners:manage (the route's scopes), which reaches only the users of its partner
 * members, and only their password. Answers that partner, or null for the master key.
 */
export const patchingPartner = (principal: Principal): string | null =>
  principal.type === 'master' ? null : (principal.userId ?? '')

/**
 * A partner's patch: its member's user, else 403 forbidden_account (a stranger and an unknown id alike, so
 * a partner learns no user ids, as with login links); then the password only. A member belongs to its
 * partner for life, so this is checked once, before the password is hashed.
 */
async function requireMemberPassword(database: Database, id: string, partnerId: string, patch: UserPatch) {
  const [member] = await database.db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.id, id), eq(users.partnerId, partnerId)))
  if (!member) throw Errors.forbiddenAccount('A partners:manage key may change only the users of its partner members.')
  const other = Object.keys(patch).find((k) => k !== 'password')
  if (other)
    throw apiError(
      'insufficient_scope',
      `A partners:manage key may change only the password of its members; ${other} needs the master key.`,
    )
}

/**
 * status, external_ids (merged key by key; null clears), limits (merged; null clears), retention, password
 * (which ends pending reset links and every dashboard session of the user). `partnerId`: the partner key's
 * user (patchingPartner), which may set only the password of its members.
 */
export async function patchUser(
  database: Database,
  id: string,
  patch: UserPatch,
  partnerId: string | null = null,
): Promise<User> {
  if (partnerId !== null) await requireMemberPassword(database, id, partnerId, patch)
  // Hashed before the transaction: scrypt takes a large fraction of a second and PGlite serialises them.
  const passwordHash = patch.password === undefined ? undefined : await hashPassword(patch.password)
  const patched = await database.tx(async (tx) => {
    const [row] = await tx
      .select()
      .from(users)
      .innerJoin(accounts, eq(accounts.id, users.accountId))
      .where(eq(users.id, id))
      .for('update')
    if (!row) throw Errors.notFound('User')
    const now = new Date()
    const [user] = await tx
      .update(users)
      .set({
        status: patch.status ?? row.users.status,
        externalIds: mergeKeys(row.users.externalIds, patch.external_ids),
        limits: mergeKeys(row.users.limits, patch.limits as Record<string, number | null> | undefined),
        ...(passwordHash ? { passwordHash, passwordGenerated: false } : {}),
        updatedAt: now,
      })
      .where(eq(users.id, id))
      .returning()
    if (passwordHash) await endPasswordAccess(tx, id, now)
    const [account] = await tx
      .update(accounts)
      .set({
        status: patch.status ?? row.accounts.status,
        transcriptRetentionDays:
          patch.transcript_retention_days === undefined
            ? row.accounts.transcriptRetentionDays
            : patch.transcript_retention_days,
        updatedAt: now,
      })
      .where(eq(accounts.id, row.accounts.id))
      .returning()
    return present(user, account)
  })
  // Status (suspension) and limits are read from caches: drop them before answering.
  await database.bus.publish([`user:${id}`, `acc:${patched.account_id}`])
  return patched
}
