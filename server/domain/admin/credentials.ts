// Any API key for the operator (GET /admin/credentials/{key}): the key as GET /credentials presents it
// (never its secret or hash), where it came from, its user and the accounts it may act for. Revoking
// (DELETE /admin/credentials/{key}) is the tenant's own revokeKey under the master principal: the key's
// cached principal is dropped through the invalidation bus, so its very next request is refused.
import { eq, inArray } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { accounts, apiKeys, users } from '~/db/schema'
import { presentKey, revokeKey } from '~/domain/credentials/keys'
import type { Principal } from '~/domain/credentials/principal'
import { Errors } from '~/lib/errors'

export async function inspectCredential(database: Database, keyId: string) {
  const db = database.db
  const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, keyId))
  if (!row) throw Errors.notFound('Credential')
  const [user] = await db.select().from(users).where(eq(users.id, row.userId))
  const ids = [...new Set([row.accountId, ...row.accountIds])]
  const accs = ids.length ? await db.select().from(accounts).where(inArray(accounts.id, ids)) : []
  return {
    ...(await presentKey(db, row)),
    source: row.source,
    revoked_at: row.revokedAt?.toISOString() ?? null,
    updated_at: row.updatedAt.toISOString(),
    user: user
      ? {
          user_id: user.id,
          email: user.email,
          name: user.name,
          status: (user as { status?: string }).status ?? null,
          account_id: user.accountId,
        }
      : null,
    accounts: accs
      .map((a) => ({ account_id: a.id, name: a.name, status: a.status, plan: a.plan }))
      .sort((a, b) => a.account_id.localeCompare(b.account_id)),
  }
}

/** 404 for an unknown key; revoking a revoked key is harmless (204 again). */
export async function revokeCredential(database: Database, principal: Principal, keyId: string) {
  await revokeKey(database, principal, keyId)
}
