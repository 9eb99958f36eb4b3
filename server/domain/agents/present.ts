// Agents and prompt versions as the API shows them (model, voice, appearance, settings with defaults).
import type { Runtime } from '~/kit/runtime'
import { END_OF_SPEECH } from '~/domain/voice-loop/listen'
import { KB_SYNC_DEFAULT } from '~/domain/kb/sync-schemas'
import { rulesCost } from './refinement'
import {
  APPEARANCE_KEYS,
  BEHAVIOURAL_FIELDS,
  NON_BEHAVIOURAL_FIELDS,
  type PromptType,
  type PromptVersionOut,
  type VoiceConfig,
} from './schemas'

import { agentVersionOf, type AgentRow, type PromptVersionRow } from './rows'

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
    end_of_speech_ms: fieldValue(row, 'end_of_speech_ms') as number,
    style: (row.settings.voice_style as string | undefined) ?? null,
  }
}

export const presentAppearance = (a: Record<string, unknown>) =>
  Object.fromEntries(APPEARANCE_KEYS.map((k) => [k, (a[k] as string | undefined) ?? null]))

/** The widget settings without the token (contract: only GET /agents/{agt}/widget, and regenerate, show it):
 *  the agent record's widget block and the answer of PATCH /agents/{agt}/widget. */
export const presentWidgetBlock = (row: AgentRow) => ({
  has_public_token: row.publicToken !== null,
  allowed_domains: row.allowedDomains,
  appearance: presentAppearance(row.appearance),
})

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
  end_of_speech_ms: END_OF_SPEECH.default,
  kb_sync: KB_SYNC_DEFAULT,
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
    analysis: row.settings.analysis ?? null,
    analysis_version: row.analysisVersion,
    refinement_rules_cost: rulesCost(row.refinementRules),
    voice: presentVoice(runtime, row),
    widget: presentWidgetBlock(row),
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
