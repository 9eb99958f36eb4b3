// Agent creation and build outputs. Agents are created only by the asynchronous build from a website
// (contract Lifecycle step 2): the build job calls createAgentRecord, then applyBuildOutputs when its
// instructions step succeeds. Both take the open transaction.
import { eq, sql } from 'drizzle-orm'
import type { Executor, Tx } from '~/db/client'
import { rowsOf } from '~/db/client'
import { agents } from '~/db/schema'
import {
  activatePromptVersion,
  agentVersionOf,
  freeLabel,
  insertPromptVersion,
  recordVersion,
  type AgentRow,
} from './agents'
import { PROMPT_TYPES, type PromptType } from './schemas'

export interface NewAgent {
  accountId: string
  name: string
  /** chat, phone, dashboard or phone_outbound; default chat. */
  agentType?: string
  websiteUrl?: string | null
  voiceId?: string | null
  /** Language tag; becomes default_language and voice_locale. */
  language?: string | null
}

/** Inserts the agent at version 0 (agt<n>-v0), with no prompt version yet; returns the row. */
export async function createAgentRecord(tx: Tx, a: NewAgent): Promise<AgentRow> {
  const [row] = await tx
    .insert(agents)
    .values({
      accountId: a.accountId,
      name: a.name,
      agentType: a.agentType ?? 'chat',
      websiteUrl: a.websiteUrl ?? null,
      voiceId: a.voiceId ?? null,
      voiceLocale: a.language ?? null,
      versionN: 0,
      settings: a.language ? { default_language: a.language, languages: [a.language] } : {},
    })
    .returning()
  return row
}

export interface BuildOutputs {
  businessName?: string | null
  businessProfile?: string | null
  role?: string | null
  greetingInitial?: string | null
  instructions: string
  chatInstructions: string
  voiceChatInstructions: string
  conversationStyle?: string | null
  /** The build's number for this agent: labels build-<n>-phone|chat|voice_chat. */
  buildNumber: number
  /** The candidates the test gate let through (proposeBuildPrompts), activated instead of new versions. */
  candidates?: Partial<Record<PromptType, string>>
}

/**
 * The build's three prompts as inactive candidates of the test gate (decisions "Test gate"), labelled as
 * applyBuildOutputs would label them.
 */
export async function proposeBuildPrompts(tx: Tx, agentId: string, out: BuildOutputs) {
  const [agent] = await tx.select().from(agents).where(eq(agents.id, agentId)).for('no key update')
  if (!agent) throw new Error(`proposeBuildPrompts: no agent ${agentId}`)
  const at = new Date()
  const agentVersion = agentVersionOf({ id: agent.id, versionN: agent.versionN + 1 })
  const out2: { id: string; label: string; type: PromptType }[] = []
  for (const type of PROMPT_TYPES) {
    const pv = await insertPromptVersion(tx, agent, {
      type,
      body: bodiesOf(out)[type],
      label: await freeLabel(tx, agent.id, `build-${out.buildNumber}-${type}`),
      notes: `Build ${out.buildNumber}`,
      agentVersion,
      at,
      active: false,
    })
    out2.push({ id: pv.id, label: pv.label, type })
  }
  return out2
}

const bodiesOf = (out: BuildOutputs): Record<PromptType, string> => ({
  phone: out.instructions,
  chat: out.chatInstructions,
  voice_chat: out.voiceChatInstructions,
})

/**
 * Writes the build outputs onto the agent and deploys one prompt version per surface labelled
 * build-<n>-<type> (a taken label gets a -2, -3… suffix), bumping agent_version once for the whole
 * build. The agent's prompt_version becomes the last label deployed (voice_chat).
 */
export async function applyBuildOutputs(
  tx: Tx,
  agentId: string,
  out: BuildOutputs,
): Promise<{ agent: AgentRow; agentVersion: string; promptVersionIds: string[] }> {
  const [agent] = await tx.select().from(agents).where(eq(agents.id, agentId)).for('update')
  if (!agent) throw new Error(`applyBuildOutputs: no agent ${agentId}`)
  const at = new Date()
  const versionN = agent.versionN + 1
  const agentVersion = agentVersionOf({ id: agent.id, versionN })
  const bodies = bodiesOf(out)
  const ids: string[] = []
  let label = agent.promptVersion
  for (const type of PROMPT_TYPES) {
    const candidate = out.candidates?.[type]
    if (candidate) {
      const pv = await activatePromptVersion(tx, agent, candidate, agentVersion, at)
      label = pv.label
      ids.push(pv.id)
      continue
    }
    label = await freeLabel(tx, agent.id, `build-${out.buildNumber}-${type}`)
    const pv = await insertPromptVersion(tx, agent, {
      type,
      body: bodies[type],
      label,
      notes: `Build ${out.buildNumber}`,
      agentVersion,
      at,
    })
    ids.push(pv.id)
  }
  const changed = ['instructions', 'chat_instructions', 'voice_chat_instructions']
  const set: Partial<AgentRow> = {
    instructions: out.instructions,
    chatInstructions: out.chatInstructions,
    voiceChatInstructions: out.voiceChatInstructions,
    versionN,
    promptVersion: label,
    updatedAt: at,
  }
  const optional: [keyof BuildOutputs, keyof AgentRow, string][] = [
    ['businessName', 'businessName', 'business_name'],
    ['businessProfile', 'businessProfile', 'business_profile'],
    ['role', 'role', 'role'],
    ['greetingInitial', 'greetingInitial', 'greeting_initial'],
    ['conversationStyle', 'conversationStyle', 'conversation_style'],
  ]
  for (const [from, to, field] of optional) {
    if (out[from] === undefined) continue
    ;(set as Record<string, unknown>)[to] = out[from]
    changed.push(field)
  }
  await recordVersion(tx, agent, { versionN, promptVersion: label, reason: 'build', changed, at })
  const [updated] = await tx.update(agents).set(set).where(eq(agents.id, agent.id)).returning()
  return { agent: updated, agentVersion, promptVersionIds: ids }
}

/** Mints a knowledge document id from the one shared sequence: doc_f<n> for files and text, doc_c<n> for crawled pages. */
export async function nextDocumentId(ex: Executor, kind: 'file' | 'text' | 'page'): Promise<string> {
  const [r] = rowsOf<{ n: string | number }>(await ex.execute(sql`SELECT nextval('kb_document_seq') AS n`))
  return `doc_${kind === 'page' ? 'c' : 'f'}${r.n}`
}
