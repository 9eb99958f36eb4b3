// The website widget: allowed domains, appearance and the public token. A token is minted when
// allowed_domains becomes non-empty (or by regenerate-token); a regenerated token replaces the old one
// at once. Widget writes never bump agent_version. Only GET /agents/{agt}/widget and regenerate-token show
// the token; PATCH answers the settings with has_public_token, like the agent record's widget block.
import { randomBytes } from 'node:crypto'
import { eq } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { agents } from '~/db/schema'
import { mergeKeys } from '~/lib/keyset'
import { loadAgent, presentAppearance, presentWidgetBlock, type AgentRow } from './agents'
import type { WidgetPatch } from './schemas'

export const newPublicToken = () => 'wpk_' + randomBytes(24).toString('base64url')

export function embedSnippet(publicUrl: string, token: string | null): string | null {
  if (!token) return null
  return `<script src="${publicUrl}/widget.js" data-token="${token}" async></script>`
}

export function presentWidget(row: AgentRow, publicUrl: string) {
  return {
    agent_id: row.id,
    public_token: row.publicToken,
    embed_snippet: embedSnippet(publicUrl, row.publicToken),
    allowed_domains: row.allowedDomains,
    appearance: presentAppearance(row.appearance),
  }
}

export async function getWidget(database: Database, publicUrl: string, accountId: string, agentId: string) {
  return presentWidget(await loadAgent(database.db, accountId, agentId), publicUrl)
}

export async function patchWidget(database: Database, accountId: string, agentId: string, patch: WidgetPatch) {
  return database.tx(async (tx) => {
    const agent = await loadAgent(tx, accountId, agentId, true)
    const allowedDomains = patch.allowed_domains ? [...new Set(patch.allowed_domains)] : agent.allowedDomains
    const appearance = patch.appearance
      ? mergeKeys(agent.appearance, patch.appearance as Record<string, unknown>)
      : agent.appearance
    const publicToken = agent.publicToken ?? (allowedDomains.length ? newPublicToken() : null)
    const [row] = await tx
      .update(agents)
      .set({ allowedDomains, appearance, publicToken, updatedAt: new Date() })
      .where(eq(agents.id, agent.id))
      .returning()
    return { agent_id: row.id, ...presentWidgetBlock(row) }
  })
}

export async function regenerateWidgetToken(database: Database, publicUrl: string, accountId: string, agentId: string) {
  return database.tx(async (tx) => {
    const agent = await loadAgent(tx, accountId, agentId, true)
    const [row] = await tx
      .update(agents)
      .set({ publicToken: newPublicToken(), updatedAt: new Date() })
      .where(eq(agents.id, agent.id))
      .returning()
    return presentWidget(row, publicUrl)
  })
}

/** The agent a public widget token belongs to (for the widget surface); a replaced token finds nothing. */
export async function agentByPublicToken(database: Database, token: string): Promise<AgentRow | null> {
  const [row] = await database.db.select().from(agents).where(eq(agents.publicToken, token))
  return row ?? null
}
