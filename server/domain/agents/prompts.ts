// Prompt versions: list, read, deploy and restore (each deploy is one transaction: the agent column,
// the retired active version, the new immutable version, the current label and one agent_version bump),
// and the deploy markers of GET /agent-versions.
import { and, desc, eq, gte, inArray, lt, or, type SQL } from 'drizzle-orm'
import type { Database, Tx } from '~/db/client'
import { agents, agentVersions, promptVersions } from '~/db/schema'
import { Errors } from '~/lib/errors'
import type { KeysetRequest } from '~/lib/keyset'
import { keysetPage } from '~/lib/keyset'
import type { Principal } from '~/domain/credentials/principal'
import type { AccountScope } from '~/domain/accounts/resolve'
import { enforceGate, GATE_WAIT_MS, gateOf } from '~/domain/agent-tests/gate'
import type { RunQueue } from '~/domain/agent-tests/runs'
import {
  activatePromptVersion,
  agentVersionOf,
  insertPromptVersion,
  loadAgent,
  presentPromptVersion,
  promptColumn,
  recordVersion,
  type AgentRow,
  type PromptVersionRow,
} from './agents'
import { PROMPT_FIELD, type PromptCreate, type PromptType } from './schemas'
import { requireOrder } from '~/lib/window'

const promptNotFound = () => Errors.notFound('Prompt version')

export async function listPrompts(database: Database, accountId: string, agentId: string, type?: PromptType) {
  await loadAgent(database.db, accountId, agentId)
  const conds = [eq(promptVersions.agentId, agentId)]
  if (type) conds.push(eq(promptVersions.type, type))
  const rows = await database.db
    .select()
    .from(promptVersions)
    .where(and(...conds))
    .orderBy(desc(promptVersions.deployedAt), desc(promptVersions.id))
  // Newest first; ids are minted in order, so equal deploy times fall back on the numeric id.
  rows.sort((a, b) => b.deployedAt.getTime() - a.deployedAt.getTime() || Number(b.id.slice(3)) - Number(a.id.slice(3)))
  return { data: rows.map((r) => presentPromptVersion(r, false)), limit: rows.length, hasMore: false, nextCursor: null }
}

export async function getPrompt(database: Database, accountId: string, agentId: string, pvId: string) {
  await loadAgent(database.db, accountId, agentId)
  const [row] = await database.db
    .select()
    .from(promptVersions)
    .where(and(eq(promptVersions.id, pvId), eq(promptVersions.agentId, agentId)))
  if (!row) throw promptNotFound()
  return presentPromptVersion(row, true)
}

async function deploy(
  runtime: RunQueue,
  accountId: string,
  agentId: string,
  reason: 'prompt_deploy' | 'prompt_restore',
  make: (
    agent: AgentRow,
    tx: Parameters<Parameters<Database['tx']>[0]>[0],
  ) => Promise<{
    type: PromptType
    body: string | null
    label: string
    notes: string | null
    restoredFrom: string | null
  }>,
) {
  const database = runtime.database
  // Without a gate, one transaction; with one, the version is a candidate (inactive, its label taken) until
  // every test of the agent has run on it (decisions "Test gate").
  const first = await database.tx(async (tx) => {
    const agent = await loadAgent(tx, accountId, agentId, true)
    const v = await make(agent, tx)
    const gate = gateOf(agent.settings)
    const at = new Date()
    const agentVersion = agentVersionOf({ id: agent.id, versionN: agent.versionN + 1 })
    if (!gate)
      return { done: await activate(tx, agent, await insertPromptVersion(tx, agent, { ...v, agentVersion, at })) }
    const pv = await insertPromptVersion(tx, agent, { ...v, agentVersion, at, active: false })
    return { gate, candidate: { id: pv.id, label: pv.label, type: v.type } }
  })
  if (first.done) return first.done
  await enforceGate(runtime, accountId, agentId, first.gate, [first.candidate], GATE_WAIT_MS)
  return database.tx(async (tx) => {
    const agent = await loadAgent(tx, accountId, agentId, true)
    const agentVersion = agentVersionOf({ id: agent.id, versionN: agent.versionN + 1 })
    return activate(tx, agent, await activatePromptVersion(tx, agent, first.candidate.id, agentVersion, new Date()))
  })

  /** The deploy of an active version `pv`: the agent's column and label, one agent_version bump. */
  async function activate(tx: Tx, agent: AgentRow, pv: PromptVersionRow) {
    const at = pv.deployedAt
    const versionN = agent.versionN + 1
    const agentVersion = agentVersionOf({ id: agent.id, versionN })
    const type = pv.type as PromptType
    await recordVersion(tx, agent, { versionN, promptVersion: pv.label, reason, changed: [PROMPT_FIELD[type]], at })
    await tx
      .update(agents)
      .set({ ...promptColumn(type, pv.body), versionN, promptVersion: pv.label, updatedAt: at })
      .where(eq(agents.id, agent.id))
    return {
      agent_id: agent.id,
      agent_version: agentVersion,
      prompt_version: pv.label,
      version: presentPromptVersion(pv, true),
    }
  }
}

export function createPrompt(runtime: RunQueue, accountId: string, agentId: string, body: PromptCreate) {
  return deploy(runtime, accountId, agentId, 'prompt_deploy', async () => ({
    type: body.type,
    body: body.body,
    label: body.label,
    notes: body.notes ?? null,
    restoredFrom: null,
  }))
}

export async function restorePrompt(
  runtime: RunQueue,
  accountId: string,
  agentId: string,
  pvId: string,
  label?: string,
) {
  const result = await deploy(runtime, accountId, agentId, 'prompt_restore', async (agent, tx) => {
    const [old] = await tx
      .select()
      .from(promptVersions)
      .where(and(eq(promptVersions.id, pvId), eq(promptVersions.agentId, agent.id)))
    if (!old) throw promptNotFound()
    const wanted = label ?? `${old.label}-restored`
    if (wanted.length > 80)
      throw Errors.validation(
        'label',
        `The default label "${wanted.slice(0, 40)}…" exceeds 80 characters; send a label.`,
      )
    return { type: old.type as PromptType, body: old.body, label: wanted, notes: old.notes, restoredFrom: old.id }
  })
  return { ...result, restored_from: pvId }
}

// GET /agent-versions ---------------------------------------------------------------------------------

function presentMarker(m: typeof agentVersions.$inferSelect) {
  return {
    agent_id: m.agentId,
    account_id: m.accountId,
    agent_version: m.agentVersion,
    prompt_version: m.promptVersion,
    reason: m.reason,
    changed: m.changed,
    deployed_at: m.deployedAt.toISOString(),
  }
}

/** The accounts a deploy-marker read covers: the account_id values (already checked against the
 *  credential), else the account X-Svc-Account names (always so for the master key), else the
 *  credential's only account; a credential covering several accounts must name them. */
export function markerAccounts(
  principal: Principal,
  account: AccountScope,
  named: string[] | undefined,
  headerNamed: boolean,
): string[] {
  if (named?.length) return [...new Set(named)]
  if ((principal.type === 'master' || headerNamed) && account.id) return [account.id]
  const covered = principal.accountIds ?? []
  if (covered.length === 1) return [covered[0]]
  throw Errors.validation('account_id', 'account_id is required: this credential covers several accounts.')
}

export async function listAgentVersions(
  database: Database,
  accountIds: string[],
  q: { agent_id?: string; from?: string; to?: string },
  page: KeysetRequest,
) {
  requireOrder(q.from ? new Date(q.from) : null, q.to ? new Date(q.to) : null)
  const conds: SQL[] = [inArray(agentVersions.accountId, accountIds)]
  if (q.agent_id) conds.push(eq(agentVersions.agentId, q.agent_id))
  if (q.from) conds.push(gte(agentVersions.deployedAt, new Date(q.from)))
  if (q.to) conds.push(lt(agentVersions.deployedAt, new Date(q.to)))
  if (page.after) {
    const [at, id] = page.after as [string, number]
    const d = new Date(at)
    conds.push(
      or(lt(agentVersions.deployedAt, d), and(eq(agentVersions.deployedAt, d), lt(agentVersions.id, Number(id))))!,
    )
  }
  const rows = await database.db
    .select()
    .from(agentVersions)
    .where(and(...conds))
    .orderBy(desc(agentVersions.deployedAt), desc(agentVersions.id))
    .limit(page.binding.limit + 1)
  const result = await keysetPage(page, rows, (r) => [r.deployedAt.toISOString(), r.id], presentMarker)
  // A dated list's meta (contract "Envelopes"): the window as given (null for an open end); there is no
  // default range here, the markers of every date are listed.
  const iso = (t: string | undefined) => (t ? new Date(t).toISOString() : null)
  return { ...result, meta: { from: iso(q.from), to: iso(q.to), applied_default_range: false } }
}
