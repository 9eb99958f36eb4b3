// Personal API keys: minting, listing, rotation and revocation, plus the resolver that turns a bearer
// secret back into a principal. Only the SHA-256 of a secret is stored.
import { and, asc, desc, eq, inArray, lte, sql } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { accounts, apiKeys, users } from '~/db/schema'
import { Errors, apiError } from '~/lib/errors'
import { afterPosition, keysetPage, type KeysetRequest } from '~/lib/keyset'
import type { Principal } from './principal'
import type { CredentialResolver } from './authenticate'
import { allowlistWithin } from '~/lib/ip'
import { MASTER_ONLY, SCOPES, type Scope } from './scopes'
import type { ApiKey, KeyCreate, KeyUpdate } from './schemas'
import { isWellFormedToken, mintToken, sha256Hex } from '~/lib/opaque-token'

export const KEY_PREFIX = 'svc_sk_live_'
const DAY = 86_400_000
export const ROTATION_GRACE_MS = 7 * DAY

type KeyRow = typeof apiKeys.$inferSelect

/** svc_sk_live_ + 43 base64url characters (32 random bytes). */
export function mintSecret(): string {
  return mintToken(KEY_PREFIX)
}

/**
 * The key as the API shows it. `members`: the accounts of its user's partner members when the key holds
 * partners:manage (presentKeys, presentKey), which its account_ids list after its own (decisions
 * "Behaviour", Smaller contract points), as the key reaches them.
 */
export function present(
  row: KeyRow,
  extra: { secret?: string; grace_expires_at?: string; members?: readonly string[] } = {},
): ApiKey {
  const members = (extra.members ?? []).filter((id) => !row.accountIds.includes(id))
  return {
    key_id: row.id,
    name: row.name,
    key_prefix: row.keyPrefix,
    ...(extra.secret ? { secret: extra.secret } : {}),
    user_id: row.userId,
    scopes: row.scopes,
    account_ids: [...row.accountIds, ...members],
    environment: 'live',
    ip_allowlist: row.ipAllowlist,
    status: row.status as ApiKey['status'],
    expires_at: row.expiresAt.toISOString(),
    rotated_from: row.rotatedFrom,
    created_at: row.createdAt.toISOString(),
    ...(extra.grace_expires_at ? { grace_expires_at: extra.grace_expires_at } : {}),
  }
}

/** Unknown and master-only scopes are 400 invalid_scope; so is a scope the issuing key does not hold itself. */
export function checkScopes(requested: string[], issuer: Principal | null): Scope[] {
  if (!requested.length) throw apiError('invalid_scope', 'Grant at least one scope.', 'scopes')
  for (const s of requested) {
    if (!(SCOPES as readonly string[]).includes(s)) throw apiError('invalid_scope', `Unknown scope "${s}".`, 'scopes')
    if (MASTER_ONLY.includes(s as Scope))
      throw apiError('invalid_scope', `The scope "${s}" belongs to the master key and cannot be granted.`, 'scopes')
    if (issuer && issuer.type !== 'master' && !issuer.scopes.has(s as Scope)) {
      throw apiError('invalid_scope', `A key cannot grant the scope "${s}", which it does not hold.`, 'scopes')
    }
  }
  return [...new Set(requested)] as Scope[]
}

/**
 * A credential confined to addresses cannot mint one that works from anywhere: with no ip_allowlist asked
 * the new key inherits the issuer's, and each entry asked must lie inside one of the issuer's entries.
 */
export function allowlistOf(requested: string[], issuer: Principal): string[] {
  if (issuer.type === 'master' || !issuer.ipAllowlist.length) return requested
  if (!requested.length) return [...issuer.ipAllowlist]
  const outside = requested.find((entry) => !allowlistWithin(entry, issuer.ipAllowlist))
  if (outside !== undefined) {
    throw Errors.validation(
      'ip_allowlist',
      `"${outside}" is outside the ip_allowlist of the credential issuing the key; a key cannot reach beyond its issuer's addresses.`,
    )
  }
  return requested
}

/** A personal key acts for its own user only; another user's id is 403 forbidden_account. */
export function assertOwnUser(principal: Principal, userId: string) {
  if (principal.type !== 'master' && principal.userId !== userId) {
    throw Errors.forbiddenAccount('A personal key may only manage the credentials of its own user.')
  }
}

/**
 * `userId`: the key's user. A personal principal names its own user; a partners:manage key may also name
 * one of its members (decisions "Partners (issue 18)"), never granting partners:manage to it.
 */
export async function createKey(
  database: Database,
  principal: Principal,
  userId: string,
  input: Pick<KeyCreate, 'name' | 'scopes' | 'account_ids' | 'expires_in_days' | 'ip_allowlist'>,
  source: 'api' | 'dashboard' | 'oauth' = 'api',
): Promise<ApiKey> {
  const forMember = principal.type !== 'master' && principal.userId !== userId
  if (forMember && !principal.scopes.has('partners:manage')) assertOwnUser(principal, userId)
  const scopes = checkScopes(input.scopes, principal)
  if (forMember && scopes.includes('partners:manage'))
    throw apiError('invalid_scope', 'A partner cannot grant partners:manage to its members.', 'scopes')
  const ipAllowlist = allowlistOf(input.ip_allowlist ?? [], principal)
  const [user] = await database.db.select().from(users).where(eq(users.id, userId))
  // A partner key names only its own members: anyone else, existing or not, answers like another tenant.
  if (forMember && user?.partnerId !== principal.userId)
    throw Errors.forbiddenAccount('A partners:manage key may issue keys only for its own user and its members.')
  if (!user) throw Errors.notFound('User')
  const requested = [...new Set((input.account_ids ?? []).map((id) => id.replace(/^usr_/, 'acc_')))]
  const accountIds = [user.accountId, ...requested.filter((id) => id !== user.accountId)]
  if (accountIds.length > 1) {
    // Only the master key may reach beyond the user's own account.
    if (principal.type !== 'master') throw Errors.forbiddenAccount('Extra account_ids need the master key.')
    const found = await database.db.select({ id: accounts.id }).from(accounts).where(inArray(accounts.id, accountIds))
    if (found.length !== accountIds.length)
      throw Errors.validation('account_ids', 'account_ids names an account that does not exist.')
  }
  const secret = mintSecret()
  const now = new Date()
  const [row] = await database.db
    .insert(apiKeys)
    .values({
      userId,
      accountId: user.accountId,
      name: input.name ?? null,
      keyHash: sha256Hex(secret),
      keyPrefix: secret.slice(0, 24),
      scopes,
      accountIds,
      ipAllowlist,
      expiresAt: new Date(now.getTime() + (input.expires_in_days ?? 365) * DAY),
      source,
      createdAt: now,
      updatedAt: now,
    })
    .returning()
  return presentKey(database.db, row, { secret })
}

const isPartnerKey = (row: KeyRow) => row.scopes.includes('partners:manage')

/** The accounts of each partner's members (users whose partner_id is one of `partnerIds`), oldest first. */
async function membersOf(ex: Executor, partnerIds: string[]): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>()
  if (!partnerIds.length) return found
  const rows = await ex
    .select({ partnerId: users.partnerId, accountId: users.accountId })
    .from(users)
    .where(inArray(users.partnerId, partnerIds))
    .orderBy(asc(users.createdAt), asc(users.id))
  for (const r of rows) if (r.partnerId) found.set(r.partnerId, [...(found.get(r.partnerId) ?? []), r.accountId])
  return found
}

/** Keys as the API shows them, partner keys with their members' accounts (one query for the lot). */
export async function presentKeys(ex: Executor, rows: KeyRow[]): Promise<ApiKey[]> {
  const members = await membersOf(ex, [...new Set(rows.filter(isPartnerKey).map((r) => r.userId))])
  return rows.map((r) => present(r, { members: isPartnerKey(r) ? members.get(r.userId) : undefined }))
}

/** One key as the API shows it (see presentKeys). */
export async function presentKey(
  ex: Executor,
  row: KeyRow,
  extra: { secret?: string; grace_expires_at?: string } = {},
): Promise<ApiKey> {
  const members = isPartnerKey(row) ? (await membersOf(ex, [row.userId])).get(row.userId) : undefined
  return present(row, { ...extra, members })
}

/** Keys newest first, keyset on (created_at, id). `userId` null lists every key (master only). */
export async function listKeys(
  database: Database,
  userId: string | null,
  page: KeysetRequest,
  opts: { source?: string } = {},
) {
  const conds = []
  if (userId) conds.push(eq(apiKeys.userId, userId))
  if (opts.source) conds.push(eq(apiKeys.source, opts.source))
  const after = afterPosition(page, apiKeys.createdAt, apiKeys.id)
  if (after) conds.push(after)
  const rows = await database.db
    .select()
    .from(apiKeys)
    .where(conds.length ? and(...conds) : undefined)
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
    .limit(page.binding.limit + 1)
  const shown = await keysetPage(
    page,
    rows,
    (r) => [r.createdAt.toISOString(), r.id],
    (r) => r,
  )
  return { ...shown, data: await presentKeys(database.db, shown.data) }
}

/** The key as its caller may see it: another user's key answers 404, as if it did not exist. */
async function ownedKey(
  tx: Executor,
  principal: Principal,
  keyId: string,
  opts: { lock?: boolean } = {},
): Promise<KeyRow> {
  const q = tx.select().from(apiKeys).where(eq(apiKeys.id, keyId))
  const [row] = opts.lock ? await q.for('update') : await q
  if (!row || (principal.type !== 'master' && row.userId !== principal.userId)) throw Errors.notFound('Credential')
  return row
}

export async function rotateKey(database: Database, principal: Principal, keyId: string): Promise<ApiKey> {
  const rotated = await database.tx(async (tx) => {
    const old = await ownedKey(tx, principal, keyId, { lock: true })
    if (old.status === 'revoked')
      throw Errors.validation('key', 'A revoked credential cannot be rotated; revocation is final.')
    const now = new Date()
    // Both keys work until the predecessor's grace ends: 7 days, or its own earlier expiry.
    const grace = new Date(Math.min(now.getTime() + ROTATION_GRACE_MS, old.expiresAt.getTime()))
    const secret = mintSecret()
    const lifetime = Math.max(old.expiresAt.getTime() - old.createdAt.getTime(), DAY)
    const [successor] = await tx
      .insert(apiKeys)
      .values({
        userId: old.userId,
        accountId: old.accountId,
        name: old.name,
        keyHash: sha256Hex(secret),
        keyPrefix: secret.slice(0, 24),
        scopes: old.scopes,
        accountIds: old.accountIds,
        ipAllowlist: old.ipAllowlist,
        expiresAt: new Date(now.getTime() + lifetime),
        rotatedFrom: old.id,
        source: old.source,
        createdAt: now,
        updatedAt: now,
      })
      .returning()
    await tx.update(apiKeys).set({ expiresAt: grace, updatedAt: now }).where(eq(apiKeys.id, old.id))
    return presentKey(tx, successor, { secret, grace_expires_at: grace.toISOString() })
  })
  // The predecessor's expiry moved to the end of its grace: cached principals must see it.
  await database.bus.publish([`key:${keyId}`])
  return rotated
}

export async function revokeKey(database: Database, principal: Principal, keyId: string): Promise<void> {
  await database.tx(async (tx) => {
    const row = await ownedKey(tx, principal, keyId, { lock: true })
    if (row.status === 'revoked') return
    const now = new Date()
    await tx.update(apiKeys).set({ status: 'revoked', revokedAt: now, updatedAt: now }).where(eq(apiKeys.id, row.id))
  })
  await database.bus.publish([`key:${keyId}`])
}

/** An edit may keep the key's own scopes or add ones the editing principal holds, never others. */
function widenable(wanted: Scope[], current: string[], principal: Principal): Scope[] {
  if (principal.type === 'master') return wanted
  const extra = wanted.find((s) => !current.includes(s) && !principal.scopes.has(s))
  if (extra)
    throw apiError('invalid_scope', `This session cannot add the scope "${extra}", which it does not hold.`, 'scopes')
  return wanted
}

/** Dashboard edit: scopes replace the whole set, expires_in_days counts from now; never the secret. */
export async function updateKey(
  database: Database,
  principal: Principal,
  keyId: string,
  patch: KeyUpdate,
  opts: { source?: string } = {},
): Promise<ApiKey> {
  if (patch.scopes === undefined && patch.expires_in_days === undefined)
    throw Errors.validation(null, 'Send scopes, expires_in_days or both.')
  const updated = await database.tx(async (tx) => {
    const row = await ownedKey(tx, principal, keyId, { lock: true })
    if (opts.source && row.source !== opts.source) throw Errors.notFound('Credential')
    if (row.status === 'revoked')
      throw Errors.validation('key', 'A revoked credential cannot be edited; revocation is final.')
    const now = new Date()
    const [updated] = await tx
      .update(apiKeys)
      .set({
        scopes: patch.scopes ? widenable(checkScopes(patch.scopes, null), row.scopes, principal) : row.scopes,
        expiresAt: patch.expires_in_days ? new Date(now.getTime() + patch.expires_in_days * DAY) : row.expiresAt,
        updatedAt: now,
      })
      .where(eq(apiKeys.id, row.id))
      .returning()
    return presentKey(tx, updated)
  })
  await database.bus.publish([`key:${keyId}`])
  return updated
}

/**
 * Bearer secret → principal; null when unknown or revoked (401 invalid_credentials). The owner's and its
 * account's status come in the same query, so suspension (403 account_suspended) costs no round trip.
 */
export function personalKeyResolver(database: Database) {
  return async (token: string): Promise<Principal | null> => {
    if (!isWellFormedToken(token, KEY_PREFIX)) return null
    const [row] = await database.db
      .select({ key: apiKeys, userStatus: users.status, accountStatus: accounts.status })
      .from(apiKeys)
      .innerJoin(users, eq(users.id, apiKeys.userId))
      .innerJoin(accounts, eq(accounts.id, users.accountId))
      .where(eq(apiKeys.keyHash, sha256Hex(token)))
    if (!row || row.key.status !== 'active') return null
    if (isSuspended(row.userStatus, row.accountStatus)) throw Errors.accountSuspended()
    const principal = principalOf(row.key)
    if (!principal.scopes.has('partners:manage')) return principal
    return withMembers(principal, await memberAccounts(database, row.key.userId))
  }
}

export interface MemberAccount {
  accountId: string
  /** The member's user or account is suspended: the partner key is refused on it (403 account_suspended). */
  suspended: boolean
}

/**
 * A partner key reaches its members' accounts (decisions "Partners (issue 18)"): read when the principal is
 * resolved, so every key of the partner, old or new, reaches a member from the request after its creation.
 * The cached principal carries user:<partner>, which creating a member drops on every instance, and acc:<member>
 * for each member, which suspending or resuming one drops (decisions "Abuse and cost (issue 30)").
 */
export async function memberAccounts(database: Database, partnerUserId: string): Promise<MemberAccount[]> {
  const rows = await database.db
    .select({ accountId: users.accountId, userStatus: users.status, accountStatus: accounts.status })
    .from(users)
    .innerJoin(accounts, eq(accounts.id, users.accountId))
    .where(eq(users.partnerId, partnerUserId))
    .orderBy(asc(users.createdAt), asc(users.id))
  return rows.map((r) => ({ accountId: r.accountId, suspended: isSuspended(r.userStatus, r.accountStatus) }))
}

/** The principal with its members' accounts; a suspended member's stays listed (cache tags) and is marked. */
export function withMembers(principal: Principal, members: readonly MemberAccount[]): Principal {
  if (!members.length) return { ...principal, memberAccountIds: [] }
  const own = principal.accountIds ?? []
  const ids = members.map((m) => m.accountId)
  const suspended = members.filter((m) => m.suspended).map((m) => m.accountId)
  return {
    ...principal,
    accountIds: [...own, ...ids.filter((id) => !own.includes(id))],
    memberAccountIds: ids,
    ...(suspended.length ? { suspendedAccountIds: suspended } : {}),
  }
}

/** A partner key acting on a suspended member's account: 403 account_suspended (the member's own keys are). */
export function refuseSuspendedAccount(principal: Principal, accountId: string | null | undefined) {
  if (accountId && principal.suspendedAccountIds?.includes(accountId))
    throw Errors.accountSuspended(
      `The account ${accountId} is suspended; a partner key cannot act on it until it is resumed.`,
    )
}

export const isSuspended = (userStatus: string, accountStatus: string) =>
  userStatus === 'suspended' || accountStatus === 'suspended'

/**
 * Wraps a resolver whose lookup does not read the owner's status (the OAuth access-token resolver): its
 * principal's user and home account are checked with one indexed query before it is accepted.
 */
export function requireActiveTenant(database: Database, resolve: CredentialResolver): CredentialResolver {
  return async (token) => {
    const principal = await resolve(token)
    if (!principal?.userId) return principal
    const [row] = await database.db
      .select({ userStatus: users.status, accountStatus: accounts.status })
      .from(users)
      .innerJoin(accounts, eq(accounts.id, users.accountId))
      .where(eq(users.id, principal.userId))
    if (!row || isSuspended(row.userStatus, row.accountStatus)) throw Errors.accountSuspended()
    return principal
  }
}

export function principalOf(row: KeyRow, type: Principal['type'] = 'personal'): Principal {
  return {
    type,
    credentialId: row.id,
    userId: row.userId,
    scopes: new Set(row.scopes as Scope[]),
    accountIds: row.accountIds,
    homeAccountId: row.accountId,
    ipAllowlist: row.ipAllowlist,
    expiresAt: row.expiresAt,
  }
}

/** Sweep: rotated predecessors whose grace has ended become revoked. */
export async function revokeEndedGrace(database: Database, now = new Date()): Promise<number> {
  const rows = await database.db
    .update(apiKeys)
    .set({ status: 'revoked', revokedAt: now, updatedAt: now })
    .where(
      and(
        eq(apiKeys.status, 'active'),
        lte(apiKeys.expiresAt, now),
        sql`${apiKeys.id} IN (SELECT rotated_from FROM api_keys WHERE rotated_from IS NOT NULL)`,
      ),
    )
    .returning({ id: apiKeys.id })
  await database.bus.publish(rows.map((r) => `key:${r.id}`))
  return rows.length
}
