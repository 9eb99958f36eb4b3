// The dashboard's view of OAuth connections: one per grant of the logged-in user.
import { and, desc, eq, isNull } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { apiKeys, oauthClients, oauthGrants } from '~/db/schema'
import { Errors } from '~/lib/errors'
import { afterPosition, keysetPage, type KeysetRequest } from '~/lib/keyset'
import { revokeGrant } from './authorize'

type Row = { grant: typeof oauthGrants.$inferSelect; clientName: string | null; redirectUris: string[] }

const hostOf = (u: string) => {
  try {
    return new URL(u).host
  } catch {
    return u
  }
}

function present(r: Row) {
  return {
    connection_id: r.grant.id,
    client_id: r.grant.clientId,
    client_name: r.clientName,
    redirect_hosts: [...new Set(r.redirectUris.map(hostOf))],
    scopes: r.grant.scopes,
    resource: r.grant.resource,
    key_id: r.grant.keyId,
    account_id: r.grant.accountId,
    created_at: r.grant.createdAt.toISOString(),
    last_used_at: r.grant.lastUsedAt?.toISOString() ?? null,
  }
}

/** Live connections of a user (grant not revoked, key still active), newest first (keyset on created_at, id). */
export async function listConnections(database: Database, userId: string, page: KeysetRequest) {
  const conds = [eq(oauthGrants.userId, userId), isNull(oauthGrants.revokedAt), eq(apiKeys.status, 'active')]
  const after = afterPosition(page, oauthGrants.createdAt, oauthGrants.id)
  if (after) conds.push(after)
  const rows = await database.db
    .select({ grant: oauthGrants, clientName: oauthClients.clientName, redirectUris: oauthClients.redirectUris })
    .from(oauthGrants)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .innerJoin(apiKeys, eq(apiKeys.id, oauthGrants.keyId))
    .where(and(...conds))
    .orderBy(desc(oauthGrants.createdAt), desc(oauthGrants.id))
    .limit(page.binding.limit + 1)
  return keysetPage(page, rows, (r) => [r.grant.createdAt.toISOString(), r.grant.id], present)
}

/** Disconnect: every token of the connection and its key stop working at once. Idempotent; another user's id is 404. */
export async function disconnect(database: Database, userId: string, grantId: string): Promise<void> {
  const [grant] = await database.db
    .select({ userId: oauthGrants.userId })
    .from(oauthGrants)
    .where(eq(oauthGrants.id, grantId))
  if (!grant || grant.userId !== userId) throw Errors.notFound('Connection')
  await revokeGrant(database, grantId)
}
