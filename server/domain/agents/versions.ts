// Versioning shared by patch, prompt deploy and restore, voice patch and the build: free labels, prompt
// versions, one version bump per request with its deploy marker.
import { and, eq, sql } from 'drizzle-orm'
import type { Executor, Tx } from '~/db/client'
import { agentVersions, promptVersions } from '~/db/schema'
import { apiError } from '~/lib/errors'
import type { PromptType } from './schemas'

import { agentVersionOf, type AgentRow } from './rows'

/** A label free on this agent: `base`, else `base-2`, `base-3`… (generated labels only). */
/** Label of the agent's active prompt version of `type` (decisions "Prompt version labels"), else the agent's
 *  own prompt_version: what a new conversation on that surface is stamped with. */
export async function activePromptLabel(ex: Executor, agent: AgentRow, type: PromptType): Promise<string | null> {
  const [pv] = await ex
    .select({ label: promptVersions.label })
    .from(promptVersions)
    .where(and(eq(promptVersions.agentId, agent.id), eq(promptVersions.type, type), eq(promptVersions.active, true)))
  return pv?.label ?? agent.promptVersion
}

export async function freeLabel(tx: Tx, agentId: string, base: string): Promise<string> {
  const taken = new Set(
    (
      await tx
        .select({ label: promptVersions.label })
        .from(promptVersions)
        .where(
          and(
            eq(promptVersions.agentId, agentId),
            sql`${promptVersions.label} LIKE ${base.replace(/[%_\\]/g, '\\$&') + '%'}`,
          ),
        )
    ).map((r) => r.label),
  )
  if (!taken.has(base)) return base
  for (let i = 2; ; i++) if (!taken.has(`${base}-${i}`)) return `${base}-${i}`
}

export const labelExists = () =>
  apiError('version_label_exists', 'This agent already has a prompt version with that label.', 'label')

/**
 * Retires the active version of that type and inserts the new one (active). 409 on a taken label. With
 * `active: false` it inserts a candidate the test gate runs before activatePromptVersion (decisions "Test
 * gate"), leaving the active version as it is.
 */
export async function insertPromptVersion(
  tx: Tx,
  agent: AgentRow,
  v: {
    type: PromptType
    body: string | null
    label: string
    notes?: string | null
    restoredFrom?: string | null
    agentVersion: string
    at: Date
    active?: boolean
  },
) {
  const active = v.active ?? true
  const [clash] = await tx
    .select({ id: promptVersions.id })
    .from(promptVersions)
    .where(and(eq(promptVersions.agentId, agent.id), eq(promptVersions.label, v.label)))
  if (clash) throw labelExists()
  if (active) await retireActive(tx, agent.id, v.type)
  const [row] = await tx
    .insert(promptVersions)
    .values({
      agentId: agent.id,
      accountId: agent.accountId,
      type: v.type,
      body: v.body,
      label: v.label,
      notes: v.notes ?? null,
      restoredFrom: v.restoredFrom ?? null,
      agentVersion: v.agentVersion,
      deployedAt: v.at,
      active,
    })
    .returning()
  return row
}

async function retireActive(tx: Tx, agentId: string, type: string) {
  await tx
    .update(promptVersions)
    .set({ active: false })
    .where(and(eq(promptVersions.agentId, agentId), eq(promptVersions.type, type), eq(promptVersions.active, true)))
}

/** Activates a candidate the test gate let through: the version of its type retires, it becomes active under
 *  `agentVersion`, deployed now. The caller writes the agent's column and label. */
export async function activatePromptVersion(tx: Tx, agent: AgentRow, pvId: string, agentVersion: string, at: Date) {
  const [pv] = await tx
    .select()
    .from(promptVersions)
    .where(and(eq(promptVersions.id, pvId), eq(promptVersions.agentId, agent.id)))
  if (!pv) throw new Error(`activatePromptVersion: no prompt version ${pvId} of ${agent.id}`)
  await retireActive(tx, agent.id, pv.type)
  const [row] = await tx
    .update(promptVersions)
    .set({ active: true, agentVersion, deployedAt: at })
    .where(eq(promptVersions.id, pvId))
    .returning()
  return row
}

/** Records a new agent_version (deploy marker) and returns it; the caller writes version_n. */
export async function recordVersion(
  tx: Tx,
  agent: AgentRow,
  next: { versionN: number; promptVersion: string | null; reason: string; changed: string[]; at: Date },
) {
  const agentVersion = agentVersionOf({ id: agent.id, versionN: next.versionN })
  await tx.insert(agentVersions).values({
    agentId: agent.id,
    accountId: agent.accountId,
    agentVersion,
    promptVersion: next.promptVersion,
    reason: next.reason,
    changed: next.changed,
    deployedAt: next.at,
  })
  return agentVersion
}

/** The agent columns a prompt type writes. */
export function promptColumn(type: PromptType, body: string | null): Partial<AgentRow> {
  return type === 'phone'
    ? { instructions: body }
    : type === 'chat'
      ? { chatInstructions: body }
      : { voiceChatInstructions: body }
}
