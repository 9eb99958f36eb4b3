// Agents across accounts for the operator (GET /admin/agents) and the operator's actions on one agent
// (POST /admin/agents/{agt}/actions): rebuild through the ordinary build path, pause and resume. A pause is
// a column (agents.paused_at): the row's revision trigger moves agents.revision with it, so the chat turn's
// cached context sees it on the next turn on every instance, and the other refusals read the row itself.
import { and, desc, eq, ilike, isNotNull, isNull, or, type SQL } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { accounts, agents, campaigns } from '~/db/schema'
import { BUILD_JOB, rerunBuild } from '~/domain/builds/builds'
import type { BuildStepName } from '~/domain/builds/schemas'
import { kickCampaign } from '~/domain/campaigns/scheduler'
import type { Runtime } from '~/kit/runtime'
import { afterPosition, type KeysetRequest, keysetPage } from '~/lib/keyset'
import { apiError } from '~/lib/errors'

type Row = Pick<
  typeof agents.$inferSelect,
  'id' | 'accountId' | 'name' | 'agentType' | 'websiteUrl' | 'promptVersion' | 'pausedAt' | 'createdAt' | 'updatedAt'
> & { accountName: string | null; accountStatus: string | null }

const columns = {
  id: agents.id,
  accountId: agents.accountId,
  name: agents.name,
  agentType: agents.agentType,
  websiteUrl: agents.websiteUrl,
  promptVersion: agents.promptVersion,
  pausedAt: agents.pausedAt,
  createdAt: agents.createdAt,
  updatedAt: agents.updatedAt,
  accountName: accounts.name,
  accountStatus: accounts.status,
}

export const presentAdminAgent = (r: Row) => ({
  agent_id: r.id,
  account_id: r.accountId,
  account_name: r.accountName,
  account_status: r.accountStatus,
  name: r.name,
  agent_type: r.agentType,
  website_url: r.websiteUrl,
  prompt_version: r.promptVersion,
  paused: r.pausedAt !== null,
  paused_at: r.pausedAt?.toISOString() ?? null,
  created_at: r.createdAt.toISOString(),
  updated_at: r.updatedAt.toISOString(),
})

export interface AdminAgentFilters {
  account_id?: string
  paused?: 'true' | 'false'
  q?: string
}

/** Every account's agents, newest first (keyset on created_at, id). */
export async function listAdminAgents(database: Database, filters: AdminAgentFilters, page: KeysetRequest) {
  const conds: (SQL | undefined)[] = []
  if (filters.account_id) conds.push(eq(agents.accountId, filters.account_id))
  if (filters.paused === 'true') conds.push(isNotNull(agents.pausedAt))
  if (filters.paused === 'false') conds.push(isNull(agents.pausedAt))
  if (filters.q) {
    const like = `%${filters.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    conds.push(or(ilike(agents.name, like), ilike(agents.websiteUrl, like), eq(agents.id, filters.q)))
  }
  conds.push(afterPosition(page, agents.createdAt, agents.id))
  const rows = await database.db
    .select(columns)
    .from(agents)
    .leftJoin(accounts, eq(accounts.id, agents.accountId))
    .where(and(...conds.filter(Boolean)))
    .orderBy(desc(agents.createdAt), desc(agents.id))
    .limit(page.binding.limit + 1)
  return keysetPage(page, rows, (r) => [r.createdAt.toISOString(), r.id], presentAdminAgent)
}

async function adminAgent(database: Database, agentId: string) {
  const [row] = await database.db
    .select(columns)
    .from(agents)
    .leftJoin(accounts, eq(accounts.id, agents.accountId))
    .where(eq(agents.id, agentId))
  if (!row) throw apiError('agent_not_found', 'Agent not found.')
  return row
}

export type AgentAction =
  | { action: 'pause' | 'resume'; reason?: string }
  | { action: 'rebuild'; from_step?: BuildStepName; reason?: string }

/**
 * pause: sets paused_at (kept when already paused, so the first pause's time stays); resume clears it.
 * rebuild: the tenant's own POST /agents/{agt}/build (its billing check, builds quota and 409 build_in_progress).
 */
export async function actOnAgent(runtime: Runtime, agentId: string, body: AgentAction) {
  const { database } = runtime
  const before = await adminAgent(database, agentId)
  if (body.action === 'rebuild') {
    const build = await rerunBuild(database, before.accountId, agentId, body.from_step ?? 'crawl')
    await runtime.queue.send(BUILD_JOB, { build_id: build.build_id })
    return { agent: presentAdminAgent(before), build }
  }
  const pausedAt = body.action === 'pause' ? (before.pausedAt ?? new Date()) : null
  if ((before.pausedAt === null) !== (pausedAt === null))
    await database.db.update(agents).set({ pausedAt, updatedAt: new Date() }).where(eq(agents.id, agentId))
  // The dialler held the agent's running campaigns: a round each now rather than at the next minute's sweep.
  if (body.action === 'resume' && before.pausedAt) {
    const running = await database.db
      .select({ id: campaigns.id })
      .from(campaigns)
      .where(and(eq(campaigns.agentId, agentId), eq(campaigns.status, 'running')))
    for (const c of running) await kickCampaign(runtime, c.id)
  }
  return { agent: presentAdminAgent(await adminAgent(database, agentId)), build: null }
}
