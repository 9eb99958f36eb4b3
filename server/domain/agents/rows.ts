// An agent's row, how it is loaded (scoped by account, optionally locked) and named.
import { and, eq } from 'drizzle-orm'
import type { Executor } from '~/db/client'
import { agents, type promptVersions } from '~/db/schema'
import { apiError } from '~/lib/errors'
import type { Principal } from '~/domain/credentials/principal'
import type { AccountScope } from '~/domain/accounts/resolve'

export type AgentRow = typeof agents.$inferSelect
export type PromptVersionRow = typeof promptVersions.$inferSelect

/** The agent's default language setting (BCP 47), or null. */
export const agentLanguage = (agent: Pick<AgentRow, 'settings'> | null): string | null =>
  agent && typeof agent.settings?.default_language === 'string' ? agent.settings.default_language : null

/** The languages the agent answers in (its `languages` setting), possibly empty. */
export const agentLanguages = (agent: Pick<AgentRow, 'settings'> | null): string[] =>
  Array.isArray(agent?.settings?.languages)
    ? (agent.settings.languages as unknown[]).filter((l): l is string => typeof l === 'string')
    : []

export const agentNotFound = () => apiError('agent_not_found', 'Agent not found.')

export const agentVersionOf = (row: Pick<AgentRow, 'id' | 'versionN'>) => `${row.id.replace('_', '')}-v${row.versionN}`

/** The account an agent request acts for: the resolved account, or on the nested alias the path account,
 *  which must be one the request may act for. Anything else answers 404 agent_not_found. */
export function agentAccount(principal: Principal, account: AccountScope, pathAccount?: string): string {
  if (pathAccount === undefined) {
    if (!account.id) throw agentNotFound()
    return account.id
  }
  const covered =
    principal.type === 'master' ? account.id === pathAccount : (principal.accountIds ?? []).includes(pathAccount)
  if (!covered) throw agentNotFound()
  return pathAccount
}

/** A paused agent (operator action, POST /admin/agents/{agt}/actions) takes no new conversation, message or call. */
export function assertNotPaused(agent: Pick<AgentRow, 'id' | 'pausedAt'>) {
  if (agent.pausedAt)
    throw apiError(
      'agent_paused',
      `Agent ${agent.id} is paused by the operator; it takes no new conversations or calls.`,
    )
}

/**
 * The agent of that account, optionally locked; another account's agent is agent_not_found. The lock is
 * FOR NO KEY UPDATE (as the account locks of build and endpoint admission): it serialises the writers of the
 * row but not the foreign-key checks (KEY SHARE) of inserts that reference it. FOR UPDATE blocked those, and
 * a rebuild (agent, then account) deadlocked with conversation creates (account, then agent) under load.
 */
export async function loadAgent(ex: Executor, accountId: string, agentId: string, lock = false): Promise<AgentRow> {
  const q = ex
    .select()
    .from(agents)
    .where(and(eq(agents.id, agentId), eq(agents.accountId, accountId)))
  const [row] = lock ? await q.for('no key update') : await q
  if (!row) throw agentNotFound()
  return row
}
