// Housekeeping of the OAuth tables: registrations nobody ever used, approvals whose code was never
// redeemed (their key was minted but its secret never shown), and token and code rows long past use.
import { and, isNull, lt, sql } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { oauthClients, oauthCodes, oauthGrants, oauthTokens } from '~/db/schema'
import { revokeGrant } from './authorize'

const DAY = 86_400_000

export async function sweepOAuth(database: Database, now = new Date()) {
  // A grant without any token whose codes have all expired can never be used: end it and its key.
  const stale = await database.db
    .select({ id: oauthGrants.id })
    .from(oauthGrants)
    .where(
      and(
        isNull(oauthGrants.revokedAt),
        sql`NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = ${oauthGrants.id})`,
        sql`NOT EXISTS (SELECT 1 FROM oauth_codes c WHERE c.grant_id = ${oauthGrants.id} AND c.used_at IS NULL AND c.expires_at > ${now.toISOString()}::timestamptz)`,
      ),
    )
  for (const g of stale) await revokeGrant(database, g.id, now)
  const clients = await database.db
    .update(oauthClients)
    .set({ deletedAt: now })
    .where(
      and(
        isNull(oauthClients.deletedAt),
        lt(oauthClients.createdAt, new Date(now.getTime() - DAY)),
        sql`NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = ${oauthClients.id})`,
      ),
    )
    .returning({ id: oauthClients.id })
  // Rows past any use: codes and access tokens a day after expiry; refresh tokens once expired (a
  // rotated one is kept until then so that its reuse is still recognised as theft).
  const cutoff = new Date(now.getTime() - DAY)
  await database.db.delete(oauthCodes).where(lt(oauthCodes.expiresAt, cutoff))
  await database.db.delete(oauthTokens).where(lt(oauthTokens.expiresAt, cutoff))
  return { grants: stale.length, clients: clients.length }
}
