// Agents: read, list, patch, and the version machinery every behavioural write shares (one bump per
// request, a deploy marker per bump, prompt versions deployed in the same transaction).
import { and, count, desc, eq, inArray, sql } from 'drizzle-orm'
import * as v from 'valibot'
import type { Database, Executor, Tx } from '~/db/client'
import { agents, agentVersions, kbDocuments, kbSummaries, promptVersions } from '~/db/schema'
import { COMPLETION_KEYS, type Capability, type CompletionKey } from '~/kit/capability'
import type { Registry } from '~/kit/registry'
import { ApiError, Errors } from '~/lib/errors'
import { mergeKeys } from '~/lib/keyset'
import type { Runtime } from '~/kit/runtime'
import type { Principal } from '~/domain/credentials/principal'
import type { AccountScope } from '~/domain/accounts/resolve'
import { findConflicts, normaliseRules, ruleCost, rulesCost } from './refinement'
import {
  APPEARANCE_KEYS,
  BEHAVIOURAL_FIELDS,
  NON_BEHAVIOURAL_FIELDS,
  PROMPT_FIELD,
  PROMPT_TYPES,
  SETTINGS_FIELDS,
  type AgentPatch,
  type PromptType,
  type PromptVersionOut,
  type VoiceConfig,
} from './schemas'

export type AgentRow = typeof agents.$inferSelect
export type PromptVersionRow = typeof promptVersions.$inferSelect

export const agentNotFound = () => new ApiError(404, 'agent_not_found', 'Agent not found.')

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

/** The agent of that account, optionally locked for update; another account's agent is agent_not_found. */
export async function loadAgent(ex: Executor, accountId: string, agentId: string, lock = false): Promise<AgentRow> {
  const q = ex
    .select()
    .from(agents)
    .where(and(eq(agents.id, agentId), eq(agents.accountId, accountId)))
  const [row] = lock ? await q.for('update') : await q
  if (!row) throw agentNotFound()
  return row
}

// Static names for engines whose plugin is not registered (the local engine's model is documented).
const KNOWN_MODELS: Record<string, [string, string]> = {
  local: ['local-retrieval-1', 'local-retrieval-1'],
  openai: ['gpt-4o-mini', 'gpt-4o'],
}

/** Chat via API always runs on the one configured engine; use_large_model picks its large model. */
export function resolveModel(runtime: Pick<Runtime, 'config' | 'registries'>, useLargeModel: boolean): string {
  const name = runtime.config.chatEngine
  const engine = runtime.registries?.chat.get(name)
  const models = engine?.models.length ? [engine.models[0], engine.models[1] ?? engine.models[0]] : KNOWN_MODELS[name]
  if (!models) return name
  return useLargeModel ? models[1] : models[0]
}

export function presentVoice(runtime: Pick<Runtime, 'registries'>, row: AgentRow): VoiceConfig {
  return {
    provider: row.aiProvider,
    model: runtime.registries?.voice.get(row.aiProvider)?.realtimeModel ?? null,
    voice_id: row.voiceId,
    voice_locale: row.voiceLocale,
    speaking_rate: row.speakingRate,
    barge_in: row.bargeIn,
    style: (row.settings.voice_style as string | undefined) ?? null,
  }
}

export const presentAppearance = (a: Record<string, unknown>) =>
  Object.fromEntries(APPEARANCE_KEYS.map((k) => [k, (a[k] as string | undefined) ?? null]))

/** The value of one whitelisted field as the API shows it (null when unknown). */
export function fieldValue(row: AgentRow, field: string): unknown {
  switch (field) {
    case 'instructions':
      return row.instructions
    case 'chat_instructions':
      return row.chatInstructions
    case 'voice_chat_instructions':
      return row.voiceChatInstructions
    case 'role':
      return row.role
    case 'greeting_initial':
      return row.greetingInitial
    case 'business_name':
      return row.businessName
    case 'business_profile':
      return row.businessProfile
    case 'conversation_style':
      return row.conversationStyle
    case 'refinement_rules':
      return row.refinementRules
    case 'ai_provider':
      return row.aiProvider
    case 'use_large_model':
      return row.useLargeModel
    case 'temperature':
      return row.temperature
    case 'max_response_tokens':
      return row.maxResponseTokens
    case 'capabilities':
      return row.capabilities
    case 'capability_settings':
      return row.capabilitySettings
    case 'voice_id':
      return row.voiceId
    case 'voice_locale':
      return row.voiceLocale
    case 'speaking_rate':
      return row.speakingRate
    case 'barge_in':
      return row.bargeIn
    case 'name':
      return row.name
    case 'website_url':
      return row.websiteUrl
    default:
      return SETTINGS_DEFAULTS[field] === undefined
        ? (row.settings[field] ?? null)
        : (row.settings[field] ?? SETTINGS_DEFAULTS[field])
  }
}

/** Settings that read as an empty collection or false rather than null when never set. */
const SETTINGS_DEFAULTS: Record<string, unknown> = {
  greetings: {},
  languages: [],
  notification_emails: [],
  end_call_phrases: [],
  tags: [],
  external_ids: {},
  collect_identity: false,
  record_calls: false,
}

export function presentAgent(runtime: Pick<Runtime, 'config' | 'registries'>, row: AgentRow) {
  const fields = Object.fromEntries(
    [...BEHAVIOURAL_FIELDS, ...NON_BEHAVIOURAL_FIELDS].map((f) => [f, fieldValue(row, f)]),
  )
  return {
    agent_id: row.id,
    account_id: row.accountId,
    name: row.name,
    agent_type: row.agentType,
    agent_version: agentVersionOf(row),
    prompt_version: row.promptVersion,
    model: resolveModel(runtime, row.useLargeModel),
    ...fields,
    refinement_rules_cost: rulesCost(row.refinementRules),
    voice: presentVoice(runtime, row),
    widget: {
      has_public_token: row.publicToken !== null,
      allowed_domains: row.allowedDomains,
      appearance: presentAppearance(row.appearance),
    },
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

export function presentPromptVersion(p: PromptVersionRow, withBody: boolean): PromptVersionOut {
  const out: PromptVersionOut = {
    id: p.id,
    agent_id: p.agentId,
    type: p.type as PromptType,
    label: p.label,
    notes: p.notes,
    restored_from: p.restoredFrom,
    agent_version: p.agentVersion,
    active: p.active,
    deployed_at: p.deployedAt.toISOString(),
  }
  return withBody ? { ...out, body: p.body } : out
}

// ---------------------------------------------------------------------------------------------------
// Versioning shared by patch, prompt deploy and restore, voice patch and the build.

/** A label free on this agent: `base`, else `base-2`, `base-3`… (generated labels only). */
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
  new ApiError(409, 'version_label_exists', 'This agent already has a prompt version with that label.', 'label')

/** Retires the active version of that type and inserts the new one (active). 409 on a taken label. */
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
  },
) {
  const [clash] = await tx
    .select({ id: promptVersions.id })
    .from(promptVersions)
    .where(and(eq(promptVersions.agentId, agent.id), eq(promptVersions.label, v.label)))
  if (clash) throw labelExists()
  await tx
    .update(promptVersions)
    .set({ active: false })
    .where(and(eq(promptVersions.agentId, agent.id), eq(promptVersions.type, v.type), eq(promptVersions.active, true)))
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
      active: true,
    })
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

// ---------------------------------------------------------------------------------------------------
// Capabilities.

/** What checkCapabilities needs of the capability registry (runtime.registries.capabilities). */
export type CapabilityLookup = Pick<Registry<Capability>, 'get'>

const parsesAsUrl = (s: string) => {
  try {
    return !!new URL(s)
  } catch {
    return false
  }
}
const E164 = /^\+[1-9]\d{1,14}$/
// The same test valibot's v.email() applies in the patch schema (notification_emails).
const isEmail = (s: string) => v.is(v.pipe(v.string(), v.email(), v.maxLength(254)), s)
const isEmpty = (x: unknown) =>
  x === undefined ||
  x === null ||
  (typeof x === 'string' && !x.trim()) ||
  (Array.isArray(x) && x.length === 0) ||
  (typeof x === 'object' && x !== null && !Array.isArray(x) && Object.keys(x).length === 0)

/** Refuses a completion value the capability reading it could not use (field `capability_settings.<key>[.<i>]`). */
function checkCompletion(key: CompletionKey, value: unknown): void {
  const field = `capability_settings.${key}`
  switch (key) {
    case 'lead_emails':
    case 'ticket_emails':
    case 'order_emails': {
      // Both forms emailsOf() reads; emailsOf() would silently skip a malformed entry, so it is refused here.
      // A trailing comma in the string form is harmless (emailsOf skips blanks), so blanks are skipped there too.
      const list = Array.isArray(value)
        ? value
        : typeof value === 'string'
          ? value.split(',').filter((e) => e.trim())
          : null
      if (!list?.length)
        throw Errors.validation(field, `${key} is a list of e-mail addresses or one comma-separated string.`)
      if (list.length > 20) throw Errors.validation(field, `${key} holds at most 20 addresses.`)
      for (const [i, e] of list.entries()) {
        if (typeof e !== 'string' || !isEmail(e.trim())) {
          throw Errors.validation(
            Array.isArray(value) ? `${field}.${i}` : field,
            `${key} must hold valid e-mail addresses; "${String(e).trim()}" is not one.`,
          )
        }
      }
      return
    }
    case 'website_url':
      if (typeof value !== 'string' || !/^https?:\/\//i.test(value) || !parsesAsUrl(value) || value.length > 2048) {
        throw Errors.validation(field, 'website_url is an http(s) URL.')
      }
      return
    case 'transfer_directory': {
      // The array form transfer_call reads, with `phone` in E.164 so a telephony provider can dial it as is.
      if (!Array.isArray(value))
        throw Errors.validation(field, 'transfer_directory is a list of {name, phone} entries.')
      if (value.length > 100) throw Errors.validation(field, 'transfer_directory holds at most 100 entries.')
      const names = new Set<string>()
      for (const [i, e] of value.entries()) {
        const at = `${field}.${i}`
        if (!e || typeof e !== 'object' || Array.isArray(e))
          throw Errors.validation(at, 'Each transfer_directory entry is {name, phone}.')
        const extra = Object.keys(e).find((k) => k !== 'name' && k !== 'phone')
        if (extra) throw Errors.validation(`${at}.${extra}`, 'A transfer_directory entry has only name and phone.')
        const { name, phone } = e as { name?: unknown; phone?: unknown }
        if (typeof name !== 'string' || !name.trim() || name.length > 100)
          throw Errors.validation(`${at}.name`, 'name is 1 to 100 characters.')
        if (typeof phone !== 'string' || !E164.test(phone))
          throw Errors.validation(`${at}.phone`, 'phone is an E.164 number such as +15550100.')
        if (names.has(name.trim().toLowerCase())) throw Errors.validation(`${at}.name`, `"${name}" is listed twice.`)
        names.add(name.trim().toLowerCase())
      }
      return
    }
  }
}

/**
 * Checks the capabilities an agent is given against the registry and their completions, on the values the
 * write would leave (after capability_settings merged): every name is a registered capability (field
 * `capabilities.<i>`), every value in an enabled capability's `needs` is present and non-empty (field
 * `capability_settings.<need>`), and every known completion that is set has a shape its capability can use.
 */
export function checkCapabilities(
  capabilities: readonly string[],
  settings: Record<string, unknown>,
  registry: CapabilityLookup,
): void {
  const seen = new Set<string>()
  const enabled: Capability[] = []
  for (const [i, name] of capabilities.entries()) {
    if (typeof name !== 'string' || !name)
      throw Errors.validation(`capabilities.${i}`, 'Capability names are non-empty strings.')
    if (seen.has(name)) throw Errors.validation(`capabilities.${i}`, `Capability "${name}" is listed twice.`)
    seen.add(name)
  }
  for (const [i, name] of capabilities.entries()) {
    const capability = registry.get(name)
    if (!capability)
      throw Errors.validation(`capabilities.${i}`, `"${name}" is not a capability (GET /capabilities lists them).`)
    enabled.push(capability)
  }
  for (const capability of enabled) {
    for (const need of capability.needs) {
      if (isEmpty(settings[need])) {
        throw Errors.validation(
          `capability_settings.${need}`,
          `Capability "${capability.name}" needs capability_settings.${need}, which is missing or empty.`,
        )
      }
    }
  }
  for (const key of COMPLETION_KEYS) if (!isEmpty(settings[key])) checkCompletion(key, settings[key])
}

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
  opts: { reason: string; labelPrefix: string; forceBump?: boolean; capabilities?: CapabilityLookup },
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
    if (same(before, after)) continue
    changed.push(field)
    if (COLUMN_OF[field]) set[COLUMN_OF[field]] = after
    else if ((SETTINGS_FIELDS as readonly string[]).includes(field)) {
      if (after === null) delete settings[field]
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
  database: Database,
  accountId: string,
  agentId: string,
  patch: AgentPatch,
  capabilities: CapabilityLookup,
) {
  // Normalising first refuses a bad rule before the transaction starts; duplicates are dropped and reported.
  const refined = patch.refinement_rules === undefined ? null : normaliseRules(patch.refinement_rules)
  const fields = refined ? { ...patch, refinement_rules: refined.rules } : patch
  return database.tx(async (tx) => {
    const agent = await loadAgent(tx, accountId, agentId, true)
    const { row, changed, deployed } = await applyAgentChanges(tx, agent, fields, {
      reason: 'patch',
      labelPrefix: 'patch',
      capabilities,
    })
    const result = {
      agent_id: row.id,
      agent_version: agentVersionOf(row),
      prompt_version: row.promptVersion,
      changed,
      deployed: deployed.map((p) => presentPromptVersion(p, false)),
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
