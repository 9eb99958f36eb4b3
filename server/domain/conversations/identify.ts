// POST /conversations/{conv}/identify: server-side visitor identification. Merges identity key by key
// (null removes a key) with the same validation as create; has_identity and updated_at follow.
import { eq } from 'drizzle-orm'
import { conversations } from '~/db/schema'
import type { Database } from '~/db/client'
import { hasIdentity, mergeIdentity, validateIdentity } from './chat-schemas'
import { conversationResource, loadConversation } from './read'

export async function identifyConversation(
  database: Database,
  accountId: string,
  convId: string,
  identity: Record<string, unknown>,
) {
  const changes = validateIdentity(identity)
  const row = await database.tx(async (tx) => {
    const conv = await loadConversation(tx, [accountId], convId, true)
    const next = mergeIdentity(conv.identity, changes)
    const [updated] = await tx
      .update(conversations)
      .set({ identity: next, hasIdentity: hasIdentity(next), updatedAt: new Date() })
      .where(eq(conversations.id, conv.id))
      .returning()
    return updated
  })
  return conversationResource(database.db, row)
}
