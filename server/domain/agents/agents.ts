// Agents: read, list and patch (one version bump per request, a deploy marker per bump, prompt versions
// deployed in the same transaction). Rows, presentation, versioning and capability checks live beside it.
import { count, desc, eq, inArray } from 'drizzle-orm'
import type { Database, Tx } from '~/db/client'
import { agents, kbDocuments, kbSummaries } from '~/db/schema'
import { mergeKeys } from '~/lib/keyset'
import type { Runtime } from '~/kit/runtime'
import { findConflicts, normaliseRules, ruleCost, rulesCost } from './refinement'
import {
  BEHAVIOURAL_FIELDS,
  PROMPT_FIELD,
  PROMPT_TYPES,
  SETTINGS_FIELDS,
  type AgentPatch,
  type PromptType,
} from './schemas'

import { agentVersionOf, loadAgent, type AgentRow, type PromptVersionRow } from './rows'
import { fieldValue, presentAgent, presentPromptVersion, resolveModel } from './present'
import { activatePromptVersion, freeLabel, insertPromptVersion, recordVersion } from './versions'
import { enforceGate, GATE_WAIT_MS, gateOf, type GateCandidate, type TestGate } from '~/domain/agent-tests/gate'
import type { RunQueue } from '~/domain/agent-tests/runs'
import { checkCapabilities, type CapabilityLookup } from './capability-settings'
import { KB_SYNC_DEFAULT } from '~/domain/kb/sync-schemas'
import { emailsOf } from '~/kit/capability'
import { checkAnalysis } from '~/domain/analysis/schemas'

export {
  agentAccount,
  agentLanguage,
  agentLanguages,
  agentNotFound,
  agentVersionOf,
  assertNotPaused,
  loadAgent,
  type AgentRow,
  type PromptVersionRow,
} from './rows'
export {
  fieldValue,
  presentAgent,
  presentAppearance,
  presentPromptVersion,
  presentVoice,
  presentWidgetBlock,
  resolveModel,
} from './present'
export {
  activatePromptVersion,
  activePromptLabel,
  freeLabel,
  insertPromptVersion,
  labelExists,
  promptColumn,
  recordVersion,
} from './versions'
export { checkCapabilities, type CapabilityLookup } from './capability-settings'

// ---------------------------------------------------------------------------------------------------
// Reads.

export async function getAgent(runtime: Runtime, accountId: string, agentId: string) {
  return presentAgent(runtime, await loadAgent(runtime.database.db, accountId, agentId))
}

/** GET /accounts/{acc}/agents: every agent of the account, newest first, enriched (no cursor). */
export async function listAgents(runtime: Runtime, accountId: string) {
  const db = runtime.database.db
  const rows = await db
    .select()
    .from(agents)
    .where(eq(agents.accountId, accountId))
    .orderBy(desc(agents.createdAt), desc(agents.id))
  const counts = rows.length
    ? await db
        .select({ agentId: kbDocuments.agentId, kind: kbDocuments.kind, n: count() })
        .from(kbDocuments)
        .where(
          inArray(
            kbDocuments.agentId,
            rows.map((r) => r.id),
          ),
        )
        .groupBy(kbDocuments.agentId, kbDocuments.kind)
    : []
  const countOf = (agentId: string, kinds: string[]) =>
    counts.filter((c) => c.agentId === agentId && kinds.includes(c.kind)).reduce((s, c) => s + Number(c.n), 0)
  const summaries = rows.length
    ? await db
        .select()
        .from(kbSummaries)
        .where(
          inArray(
            kbSummaries.agentId,
            rows.map((r) => r.id),
          ),
        )
    : []
  // Freshness of the one summary both knowledge bases feed: none until a build or reindex writes it.
  const summaryOf = (agentId: string) => {
    const s = summaries.find((x) => x.agentId === agentId)
    // A row at version 0 only records staleness or a requested reindex: no summary text exists yet.
    const written = !!s && s.version > 0
    return {
      summary_status: written ? 'ready' : 'none',
      summary_stale: s ? s.stale : null,
      summary_updated_at: written ? s.updatedAt.toISOString() : null,
    }
  }
  return {
    account_id: accountId,
    agents: rows.map((r) => ({
      agent_id: r.id,
      name: r.name,
      agent_type: r.agentType,
      agent_version: agentVersionOf(r),
      prompt_version: r.promptVersion,
      model: resolveModel(runtime, r.useLargeModel),
      website_url: r.websiteUrl,
      knowledge_bases: [
        { kind: 'files', count: countOf(r.id, ['file', 'text']), ...summaryOf(r.id) },
        { kind: 'pages', count: countOf(r.id, ['page']), ...summaryOf(r.id) },
      ],
      created_at: r.createdAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
    })),
  }
}

// ---------------------------------------------------------------------------------------------------
// PATCH /agents/{agt}.

const COLUMN_OF: Record<string, keyof AgentRow> = {
  instructions: 'instructions',
  chat_instructions: 'chatInstructions',
  voice_chat_instructions: 'voiceChatInstructions',
  role: 'role',
  greeting_initial: 'greetingInitial',
  business_name: 'businessName',
  business_profile: 'businessProfile',
  conversation_style: 'conversationStyle',
  refinement_rules: 'refinementRules',
  ai_provider: 'aiProvider',
  use_large_model: 'useLargeModel',
  temperature: 'temperature',
  max_response_tokens: 'maxResponseTokens',
  capabilities: 'capabilities',
  capability_settings: 'capabilitySettings',
  voice_id: 'voiceId',
  voice_locale: 'voiceLocale',
  speaking_rate: 'speakingRate',
  barge_in: 'bargeIn',
  name: 'name',
  website_url: 'websiteUrl',
}

const same = (a: unknown, b: unknown) => stable(a) === stable(b)
function stable(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map(stable).join(',')}]`
  if (x && typeof x === 'object')
    return `{${Object.keys(x)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable((x as any)[k])}`)
      .join(',')}}`
  return JSON.stringify(x ?? null)
}

/**
 * Applies whitelisted fields to an agent inside `tx`: writes only the values that change, bumps
 * agent_version once when any behavioural field changed, and deploys one prompt version per changed
 * prompt field. Shared by PATCH /agents/{agt} and PATCH /agents/{agt}/voice.
 */
export async function applyAgentChanges(
  tx: Tx,
  agent: AgentRow,
  patch: Record<string, unknown>,
  opts: {
    reason: string
    labelPrefix: string
    forceBump?: boolean
    capabilities?: CapabilityLookup
    /** Candidates the test gate let through, by type: activated instead of a new version being inserted. */
    candidates?: Partial<Record<PromptType, string>>
  },
) {
  const at = new Date()
  const set: Record<string, unknown> = {}
  const settings = { ...agent.settings }
  const changed: string[] = []
  for (const [field, raw] of Object.entries(patch)) {
    if (raw === undefined) continue
    const before = fieldValue(agent, field)
    let after: unknown = raw
    if (field === 'external_ids')
      after = mergeKeys((before ?? {}) as Record<string, string>, raw as Record<string, string | null>)
    if (field === 'capability_settings')
      after = mergeKeys((before ?? {}) as Record<string, unknown>, raw as Record<string, unknown>)
    // kb_sync keys left out keep their value; null is the default, stored as no setting.
    if (field === 'kb_sync') after = raw === null ? KB_SYNC_DEFAULT : { ...(before as object), ...(raw as object) }
    if (same(before, after)) continue
    changed.push(field)
    if (COLUMN_OF[field]) set[COLUMN_OF[field]] = after
    else if (field === 'analysis') {
      // Its own version (decisions "Conversation analysis"): conversations are analysed once per version.
      set.analysisVersion = agent.analysisVersion + 1
      if (after === null) delete settings.analysis
      else settings.analysis = after
    } else if ((SETTINGS_FIELDS as readonly string[]).includes(field)) {
      if (after === null || (field === 'kb_sync' && raw === null)) delete settings[field]
      else settings[field] = after
    }
  }
  if (changed.includes('capabilities') || changed.includes('capability_settings')) {
    // Every caller that can change these fields passes the registry; a missing one is a wiring bug.
    if (!opts.capabilities)
      throw new Error('applyAgentChanges: capability fields changed without the capability registry')
    checkCapabilities(
      (set.capabilities ?? agent.capabilities) as string[],
      (set.capabilitySettings ?? agent.capabilitySettings) as Record<string, unknown>,
      opts.capabilities,
      emailsOf(settings.notification_emails).length > 0,
    )
  }
  const behavioural = changed.some((f) => (BEHAVIOURAL_FIELDS as readonly string[]).includes(f))
  const deployed: PromptVersionRow[] = []
  let versionN = agent.versionN
  let promptVersion = agent.promptVersion
  if (behavioural || (opts.forceBump && changed.length)) {
    versionN = agent.versionN + 1
    const agentVersion = agentVersionOf({ id: agent.id, versionN })
    for (const type of PROMPT_TYPES) {
      const field = PROMPT_FIELD[type]
      if (!changed.includes(field)) continue
      const candidate = opts.candidates?.[type]
      if (candidate) {
        const pv = await activatePromptVersion(tx, agent, candidate, agentVersion, at)
        deployed.push(pv)
        promptVersion = pv.label
        continue
      }
      const label = await freeLabel(tx, agent.id, `${opts.labelPrefix}-${agentVersion}-${type}`)
      deployed.push(
        await insertPromptVersion(tx, agent, {
          type,
          body: patch[field] as string,
          label,
          notes: null,
          agentVersion,
          at,
        }),
      )
      promptVersion = label
    }
    await recordVersion(tx, agent, { versionN, promptVersion, reason: opts.reason, changed, at })
  }
  let row = agent
  if (changed.length) {
    ;[row] = await tx
      .update(agents)
      .set({ ...set, settings, versionN, promptVersion, updatedAt: at } as Partial<AgentRow>)
      .where(eq(agents.id, agent.id))
      .returning()
  }
  return { row, changed, deployed }
}

export async function patchAgent(
  runtime: RunQueue,
  accountId: string,
  agentId: string,
  patch: AgentPatch,
  capabilities: CapabilityLookup,
) {
  const database = runtime.database
  // Normalising first refuses a bad rule before the transaction starts; duplicates are dropped and reported.
  const refined = patch.refinement_rules === undefined ? null : normaliseRules(patch.refinement_rules)
  checkAnalysis(patch.analysis)
  const fields = refined ? { ...patch, refinement_rules: refined.rules } : patch
  // With a test gate, the new prompts are candidates first: the request is written only once they pass.
  const gated = await proposeCandidates(database, accountId, agentId, fields, capabilities)
  if (gated) await enforceGate(runtime, accountId, agentId, gated.gate, gated.candidates, GATE_WAIT_MS)
  const byType = gated ? Object.fromEntries(gated.candidates.map((c) => [c.type, c.id])) : undefined
  return database.tx(async (tx) => {
    const agent = await loadAgent(tx, accountId, agentId, true)
    const { row, changed, deployed } = await applyAgentChanges(tx, agent, fields, {
      reason: 'patch',
      labelPrefix: 'patch',
      capabilities,
      candidates: byType,
    })
    const result = {
      agent_id: row.id,
      agent_version: agentVersionOf(row),
      prompt_version: row.promptVersion,
      changed,
      deployed: deployed.map((p) => presentPromptVersion(p, false)),
      ...(patch.analysis === undefined ? {} : { analysis_version: row.analysisVersion }),
    }
    if (!refined) return result
    // Conflicts are checked against the prompts the agent runs with after this request (row, not agent).
    const conflicts = findConflicts(refined.rules, {
      phone: row.instructions,
      chat: row.chatInstructions,
      voice_chat: row.voiceChatInstructions,
    })
    const cost = refined.rules.map((rule) => ({ rule, ...ruleCost(rule) }))
    return {
      ...result,
      refinement: {
        rules: refined.rules,
        conflicts,
        duplicates: refined.duplicates,
        cost,
        total_tokens: rulesCost(refined.rules).total_tokens,
      },
    }
  })
}

/** Thrown inside the savepoint that tries a gated patch, to undo it. */
const TRIED = Symbol('tried')

/**
 * When the gate in force after this request (the patch's test_gate, else the agent's) is set and the patch
 * changes a prompt field: tries the whole patch in a savepoint (so a request that would be refused anyway is
 * refused before any test runs, and nothing of it is written), then inserts each changed prompt as an
 * inactive candidate labelled as the deploy would be (patch-<agent_version>-<type>). Null otherwise.
 */
async function proposeCandidates(
  database: Database,
  accountId: string,
  agentId: string,
  fields: Record<string, unknown>,
  capabilities: CapabilityLookup,
): Promise<{ gate: TestGate; candidates: GateCandidate[] } | null> {
  return database.tx(async (tx) => {
    const agent = await loadAgent(tx, accountId, agentId, true)
    const gate = fields.test_gate === undefined ? gateOf(agent.settings) : gateOf({ test_gate: fields.test_gate })
    if (!gate) return null
    const types = PROMPT_TYPES.filter((t) => {
      const value = fields[PROMPT_FIELD[t]]
      return value !== undefined && !same(value, fieldValue(agent, PROMPT_FIELD[t]))
    })
    if (!types.length) return null
    try {
      await tx.transaction(async (sp) => {
        await applyAgentChanges(sp, agent, fields, { reason: 'patch', labelPrefix: 'patch', capabilities })
        throw TRIED
      })
    } catch (err) {
      if (err !== TRIED) throw err
    }
    const at = new Date()
    const agentVersion = agentVersionOf({ id: agent.id, versionN: agent.versionN + 1 })
    const candidates: GateCandidate[] = []
    for (const type of types) {
      const label = await freeLabel(tx, agent.id, `patch-${agentVersion}-${type}`)
      const pv = await insertPromptVersion(tx, agent, {
        type,
        body: fields[PROMPT_FIELD[type]] as string,
        label,
        notes: null,
        agentVersion,
        at,
        active: false,
      })
      candidates.push({ id: pv.id, label: pv.label, type })
    }
    return { gate, candidates }
  })
}
