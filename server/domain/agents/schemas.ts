// Agents, prompt versions, widget and voice: request and response schemas (decisions "Agent patch
// whitelist (43)" plus end_of_speech_ms from "Real-time voice", "PromptType", "Prompt version labels").
import * as v from 'valibot'
import { coded } from '~/lib/errors'
import { AccountId, Cursor, Id, Limit, Timestamp, JsonRecord } from '~/lib/schemas'
import { businessHoursProblem } from '~/domain/conversations/behaviour'
import { AnalysisSetting } from '~/domain/analysis/schemas'
import { KbSyncSetting } from '~/domain/kb/sync-schemas'

export const AGENT_TYPES = ['chat', 'phone', 'dashboard', 'phone_outbound'] as const
export const PROMPT_TYPES = ['phone', 'chat', 'voice_chat'] as const
export type PromptType = (typeof PROMPT_TYPES)[number]
/** The agent column each prompt type writes. */
export const PROMPT_FIELD: Record<PromptType, 'instructions' | 'chat_instructions' | 'voice_chat_instructions'> = {
  phone: 'instructions',
  chat: 'chat_instructions',
  voice_chat: 'voice_chat_instructions',
}

/** 20 behavioural fields: a change of value mints a new agent_version. */
export const BEHAVIOURAL_FIELDS = [
  'instructions',
  'chat_instructions',
  'voice_chat_instructions',
  'role',
  'greeting_initial',
  'business_name',
  'business_profile',
  'conversation_style',
  'refinement_rules',
  'ai_provider',
  'use_large_model',
  'temperature',
  'max_response_tokens',
  'capabilities',
  'capability_settings',
  'voice_id',
  'voice_locale',
  'speaking_rate',
  'barge_in',
  'end_of_speech_ms',
] as const
/** 25 non-behavioural fields: read at runtime, no new agent_version. */
export const NON_BEHAVIOURAL_FIELDS = [
  'name',
  'greeting',
  'public_chat_greeting',
  'greetings',
  'default_language',
  'languages',
  'timezone',
  'voice_style',
  'notification_emails',
  'website_url',
  'business_hours',
  'after_hours_message',
  'fallback_message',
  'escalation_message',
  'max_call_duration_s',
  'silence_timeout_s',
  'end_call_phrases',
  'collect_identity',
  'record_calls',
  'summary_language',
  'tags',
  'external_ids',
  'metadata',
  'description',
  'test_gate',
  'kb_sync',
] as const
/** Fields kept in the agents.settings jsonb: the non-behavioural ones but the two columns name and
 *  website_url, and the one voice setting without a column of its own. */
export const SETTINGS_FIELDS = [
  ...NON_BEHAVIOURAL_FIELDS.filter((f) => f !== 'name' && f !== 'website_url'),
  'end_of_speech_ms',
] as const

export const AgentParams = v.object({ agt: Id('agt') })
const AccountIdParam = AccountId
export const AccountParams = v.object({ acc: AccountIdParam })
export const AccountAgentParams = v.object({ acc: AccountIdParam, agt: Id('agt') })
export const PromptParams = v.object({ agt: Id('agt'), pv: Id('pv') })

// Building blocks for the whitelist.
const Text = (max: number) => v.pipe(v.string(), v.maxLength(max, `At most ${max} characters.`))
const NonEmpty = (max: number) =>
  v.pipe(v.string(), v.trim(), v.minLength(1, 'Must not be empty.'), v.maxLength(max, `At most ${max} characters.`))
const Lang = v.pipe(
  v.string(),
  v.regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'Expected a language tag such as en or en-US.'),
)
const Strings = (maxItems: number, maxLen: number) =>
  v.pipe(v.array(NonEmpty(maxLen)), v.maxLength(maxItems, `At most ${maxItems} items.`))
const Email = v.pipe(v.string(), v.email('Expected an e-mail address.'), v.maxLength(254))
const HttpUrl = v.pipe(
  v.string(),
  v.url('Expected an http(s) URL.'),
  v.regex(/^https?:\/\//i, 'Expected an http(s) URL.'),
  v.maxLength(2048),
)
const isTimezone = (tz: string) => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz })
    return true
  } catch {
    return false
  }
}
const Timezone = v.pipe(
  v.string(),
  v.maxLength(64),
  v.check(isTimezone, 'Expected an IANA time zone such as Europe/Paris.'),
)
const JsonObject = v.pipe(
  JsonRecord(v.string(), v.unknown()),
  v.check((o) => JSON.stringify(o).length <= 20_000, 'At most 20000 characters of JSON.'),
)
const Key = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'Keys are 1-64 letters, digits, _ . : -'))
const PromptBody = v.pipe(v.string(), v.maxLength(200_000, 'At most 200000 characters.'))

/** The patch whitelist: exactly 46 optional fields; any other key is 400 unsupported_field. */
export const AgentPatch = v.strictObject({
  // Behavioural (19)
  instructions: v.optional(PromptBody),
  chat_instructions: v.optional(PromptBody),
  voice_chat_instructions: v.optional(PromptBody),
  role: v.optional(v.nullable(Text(20_000))),
  greeting_initial: v.optional(v.nullable(Text(2_000))),
  business_name: v.optional(v.nullable(Text(200))),
  business_profile: v.optional(v.nullable(Text(50_000))),
  conversation_style: v.optional(v.nullable(Text(2_000))),
  refinement_rules: v.optional(Strings(100, 1_000)),
  ai_provider: v.optional(
    v.pipe(v.string(), v.regex(/^[a-z0-9_-]{1,64}$/, 'Expected a provider name such as openai.')),
  ),
  use_large_model: v.optional(v.boolean()),
  temperature: v.optional(
    v.pipe(v.number(), v.minValue(0, 'temperature is from 0 to 2.'), v.maxValue(2, 'temperature is from 0 to 2.')),
  ),
  max_response_tokens: v.optional(
    v.nullable(v.pipe(v.number(), v.integer('Expected an integer.'), v.minValue(1), v.maxValue(32_000))),
  ),
  capabilities: v.optional(
    v.pipe(
      v.array(
        v.pipe(v.string(), v.regex(/^[a-z0-9_]{1,64}$/, 'Capability names are 1-64 lower-case letters, digits or _.')),
      ),
      v.maxLength(50),
    ),
  ),
  capability_settings: v.optional(
    v.pipe(
      JsonRecord(Key, v.unknown()),
      v.check((o) => JSON.stringify(o).length <= 20_000, 'At most 20000 characters of JSON.'),
    ),
  ),
  voice_id: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(128)))),
  voice_locale: v.optional(v.nullable(Lang)),
  speaking_rate: v.optional(
    v.pipe(
      v.number(),
      v.minValue(0.5, 'speaking_rate is from 0.5 to 2.'),
      v.maxValue(2, 'speaking_rate is from 0.5 to 2.'),
    ),
  ),
  barge_in: v.optional(v.boolean()),
  end_of_speech_ms: v.optional(
    v.nullable(
      v.pipe(
        v.number(),
        v.integer('Expected an integer.'),
        v.minValue(200, 'end_of_speech_ms is from 200 to 2000.'),
        v.maxValue(2_000, 'end_of_speech_ms is from 200 to 2000.'),
        v.description(
          "Silence (ms) after the caller's speech that ends their turn on calls and voice chats; null restores the default 500.",
        ),
      ),
    ),
  ),
  // Non-behavioural (25)
  name: v.optional(NonEmpty(200)),
  greeting: v.optional(v.nullable(Text(2_000))),
  public_chat_greeting: v.optional(v.nullable(Text(2_000))),
  greetings: v.optional(
    JsonRecord(
      v.picklist(PROMPT_TYPES, 'greetings keys are phone, chat and voice_chat.'),
      JsonRecord(Lang, v.nullable(Text(2_000))),
    ),
  ),
  default_language: v.optional(v.nullable(Lang)),
  languages: v.optional(v.pipe(v.array(Lang), v.maxLength(50))),
  timezone: v.optional(v.nullable(Timezone)),
  voice_style: v.optional(v.nullable(Text(500))),
  notification_emails: v.optional(v.pipe(v.array(Email), v.maxLength(20))),
  website_url: v.optional(v.nullable(HttpUrl)),
  business_hours: v.optional(
    v.pipe(
      v.nullable(JsonObject),
      v.rawCheck(({ dataset, addIssue }) => {
        const problem = dataset.typed ? businessHoursProblem(dataset.value) : null
        if (problem) addIssue({ message: problem })
      }),
      v.description(
        '{mon…sun: [["HH:MM", "HH:MM"], …]} in the agent\'s timezone; a day absent or [] is closed; "24:00" may close a day; null is always open.',
      ),
    ),
  ),
  after_hours_message: v.optional(v.nullable(Text(2_000))),
  fallback_message: v.optional(v.nullable(Text(2_000))),
  escalation_message: v.optional(v.nullable(Text(2_000))),
  max_call_duration_s: v.optional(
    v.nullable(v.pipe(v.number(), v.integer('Expected an integer.'), v.minValue(30), v.maxValue(14_400))),
  ),
  silence_timeout_s: v.optional(
    v.nullable(v.pipe(v.number(), v.integer('Expected an integer.'), v.minValue(1), v.maxValue(300))),
  ),
  end_call_phrases: v.optional(Strings(50, 200)),
  collect_identity: v.optional(v.boolean()),
  record_calls: v.optional(v.boolean()),
  summary_language: v.optional(v.nullable(Lang)),
  tags: v.optional(Strings(50, 64)),
  external_ids: v.optional(JsonRecord(Key, v.nullable(v.pipe(v.string(), v.maxLength(256))))),
  metadata: v.optional(v.nullable(JsonObject)),
  description: v.optional(v.nullable(Text(2_000))),
  // Outside the 44 (decisions "Conversation analysis"): no agent_version, its own analysis_version.
  analysis: v.optional(
    v.pipe(
      AnalysisSetting,
      v.description(
        '{fields: [{name (snake_case, ≤ 40), type: string|number|boolean|enum|date, description (≤ 500), enum? (type enum only), required?}] (≤ 25, names unique), success_criteria? (≤ 1000)} or null. Each change bumps analysis_version; ended conversations are analysed once per version.',
      ),
    ),
  ),
  test_gate: v.optional(
    v.pipe(
      v.nullable(
        v.strictObject({
          min_pass_rate: v.pipe(
            v.number('min_pass_rate is a number from 0 to 1.'),
            v.minValue(0, 'min_pass_rate is from 0 to 1.'),
            v.maxValue(1, 'min_pass_rate is from 0 to 1.'),
          ),
        }),
      ),
      v.description(
        "{min_pass_rate: 0–1}: a new prompt version (patch of a prompt field, deploy, restore, a build's instructions step) is activated only when every test of the agent, run on it, reaches this pass rate; else 409 tests_failed and the version stays listed, inactive. null: no gate.",
      ),
    ),
  ),
  kb_sync: v.optional(KbSyncSetting),
})
export type AgentPatch = v.InferOutput<typeof AgentPatch>
export const AGENT_PATCH_DESCRIPTION =
  'Any of the 46 whitelisted fields. A request that changes the value of a behavioural field (prompts, build outputs and refinement_rules, model, capabilities, voice) bumps agent_version once; a changed prompt field (instructions, chat_instructions, voice_chat_instructions) also deploys a prompt version labelled patch-<agent_version>-<type>. Unchanged values are not reported in changed and bump nothing. external_ids and capability_settings merge key by key (null clears a key). With test_gate set (in the agent or in this request), a changed prompt field is first deployed as an inactive candidate and every test of the agent runs on it; below min_pass_rate, or when the run errors or outlasts 100 s, the whole request is refused with 409 tests_failed naming the run and the first failing assertion, and only the candidate is kept (listed, inactive). refinement_rules are stored normalised (trimmed, list markers removed, capitalised, ending with a full stop; 3 to 500 characters) with repeats dropped; when the body has refinement_rules the answer adds refinement {rules, conflicts, duplicates, cost, total_tokens}: likely conflicts between rules and with the prompts are reported and the rules are still saved. Every capability must be registered and its needed completions (capability_settings) present and well-formed after the merge, else 400 validation_error naming the field.'

const Ts = v.pipe(v.string(), v.isoTimestamp())
const Str = v.nullable(v.string())

type AgentField = (typeof BEHAVIOURAL_FIELDS)[number] | (typeof NON_BEHAVIOURAL_FIELDS)[number]
/** Whitelisted fields that always read as a value: NOT NULL columns and settings with a default (present.ts);
 *  every other field reads null when unknown (contract "Conventions"). */
const NEVER_NULL = new Set<string>([
  'refinement_rules',
  'ai_provider',
  'use_large_model',
  'temperature',
  'capabilities',
  'capability_settings',
  'speaking_rate',
  'barge_in',
  'greetings',
  'languages',
  'notification_emails',
  'end_call_phrases',
  'tags',
  'external_ids',
  'collect_identity',
  'record_calls',
  'end_of_speech_ms',
  'kb_sync',
])
const unwrap = (s: v.GenericSchema): v.GenericSchema =>
  s.type === 'optional' || s.type === 'nullable' ? unwrap((s as unknown as { wrapped: v.GenericSchema }).wrapped) : s
/** A whitelisted field as the agent record shows it: the patch's own type, null where it may be unknown. */
const presented = (field: keyof typeof AgentPatch.entries): v.GenericSchema => {
  const inner = unwrap(AgentPatch.entries[field] as v.GenericSchema)
  return NEVER_NULL.has(field) ? inner : v.nullable(inner)
}

export const VoiceConfig = v.object({
  provider: v.string(),
  model: Str,
  voice_id: Str,
  voice_locale: Str,
  speaking_rate: v.number(),
  barge_in: v.boolean(),
  end_of_speech_ms: v.pipe(
    v.number(),
    v.description("Silence (ms) after the caller's speech that ends their turn (200–2000, default 500)."),
  ),
  style: Str,
})
export type VoiceConfig = v.InferOutput<typeof VoiceConfig>

export const APPEARANCE_KEYS = [
  'theme',
  'primary_color',
  'position',
  'title',
  'launcher_text',
  'avatar_url',
  'welcome_message',
] as const
/** The widget's appearance as presented: every key, null when unset (GET /agents/{agt}/widget, GET /widget/config). */
export const AppearanceOut = v.object(
  Object.fromEntries(APPEARANCE_KEYS.map((k) => [k, Str])) as Record<(typeof APPEARANCE_KEYS)[number], typeof Str>,
)

export const WidgetBlock = v.object({
  has_public_token: v.boolean(),
  allowed_domains: v.array(v.string()),
  appearance: AppearanceOut,
})
/** The answer of PATCH /agents/{agt}/widget: the settings, never the token. */
export const WidgetSettings = v.object({ agent_id: v.string(), ...WidgetBlock.entries })
export const Widget = v.object({
  agent_id: v.string(),
  public_token: Str,
  embed_snippet: Str,
  allowed_domains: v.array(v.string()),
  appearance: AppearanceOut,
})

export const Agent = v.object({
  agent_id: v.string(),
  account_id: v.string(),
  name: v.string(),
  agent_type: v.picklist(AGENT_TYPES),
  agent_version: v.string(),
  prompt_version: Str,
  model: v.string(),
  ...(Object.fromEntries(
    [...BEHAVIOURAL_FIELDS, ...NON_BEHAVIOURAL_FIELDS].filter((f) => f !== 'name').map((f) => [f, presented(f)]),
  ) as Record<Exclude<AgentField, 'name'>, v.GenericSchema>),
  analysis: presented('analysis'),
  analysis_version: v.pipe(v.number(), v.description('Bumped by each change of analysis; 0 when never set.')),
  refinement_rules_cost: v.object({
    per_rule: v.array(v.object({ chars: v.number(), tokens: v.number() })),
    total_tokens: v.number(),
  }),
  voice: VoiceConfig,
  widget: WidgetBlock,
  created_at: Ts,
  updated_at: Ts,
})

const KnowledgeBase = v.object({
  kind: v.picklist(['files', 'pages']),
  count: v.number(),
  summary_status: Str,
  summary_stale: v.nullable(v.boolean()),
  summary_updated_at: v.nullable(Ts),
})
export const AgentSummary = v.object({
  agent_id: v.string(),
  name: v.string(),
  agent_type: v.picklist(AGENT_TYPES),
  agent_version: v.string(),
  prompt_version: Str,
  model: v.string(),
  website_url: Str,
  knowledge_bases: v.array(KnowledgeBase),
  created_at: Ts,
  updated_at: Ts,
})
export const AgentList = v.object({ account_id: v.string(), agents: v.array(AgentSummary) })

export const PromptVersion = v.object({
  id: v.string(),
  agent_id: v.string(),
  type: v.picklist(PROMPT_TYPES),
  body: v.optional(Str),
  label: v.string(),
  notes: Str,
  restored_from: Str,
  agent_version: v.string(),
  active: v.boolean(),
  deployed_at: Ts,
})
export type PromptVersionOut = v.InferOutput<typeof PromptVersion>

const Surface = v.picklist(PROMPT_TYPES)
export const RefinementReport = v.object({
  rules: v.array(v.string()),
  conflicts: v.array(
    v.object({
      rule_index: v.number(),
      rule: v.string(),
      with: v.variant('kind', [
        v.object({ kind: v.literal('rule'), index: v.number() }),
        v.object({ kind: v.literal('prompt'), surface: Surface, excerpt: v.string() }),
      ]),
      reason: v.string(),
    }),
  ),
  duplicates: v.array(
    v.object({
      kind: v.literal('duplicate'),
      index: v.number(),
      rule: v.string(),
      duplicate_of: v.number(),
      reason: v.string(),
    }),
  ),
  cost: v.array(v.object({ rule: v.string(), chars: v.number(), tokens: v.number() })),
  total_tokens: v.number(),
})
export const AgentWriteResult = v.object({
  agent_id: v.string(),
  agent_version: v.string(),
  prompt_version: Str,
  changed: v.array(v.string()),
  deployed: v.array(PromptVersion),
  refinement: v.optional(RefinementReport),
  /** Present when the body set analysis (its own version, bumped by each change). */
  analysis_version: v.optional(v.number()),
})
export const DeployResult = v.object({
  agent_id: v.string(),
  agent_version: v.string(),
  prompt_version: v.string(),
  version: PromptVersion,
  restored_from: v.optional(v.string()),
})

const Label = v.pipe(
  v.string(),
  v.minLength(1, 'label is 1 to 80 characters.'),
  v.maxLength(80, 'label is 1 to 80 characters.'),
)
export const PromptCreate = v.strictObject({
  type: v.picklist(PROMPT_TYPES, 'type is phone, chat or voice_chat.'),
  body: PromptBody,
  label: Label,
  notes: v.optional(v.nullable(Text(2_000))),
})
export type PromptCreate = v.InferOutput<typeof PromptCreate>
export const PromptRestore = v.strictObject({ label: v.optional(Label) })
export const PromptListQuery = v.object({
  type: v.optional(v.picklist(PROMPT_TYPES, coded('unsupported_filter', 'type is phone, chat or voice_chat.'))),
})

const Domain = v.pipe(
  v.string(),
  v.toLowerCase(),
  v.regex(
    /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$|^localhost$/,
    'Expected a host name such as example.com or *.example.com.',
  ),
)
const Color = v.pipe(v.string(), v.regex(/^#[0-9a-fA-F]{6}$/, 'Expected a colour such as #1a2b3c.'))
export const AppearancePatch = v.strictObject({
  theme: v.optional(v.nullable(v.picklist(['light', 'dark', 'auto'], 'theme is light, dark or auto.'))),
  primary_color: v.optional(v.nullable(Color)),
  position: v.optional(
    v.nullable(v.picklist(['bottom-right', 'bottom-left'], 'position is bottom-right or bottom-left.')),
  ),
  title: v.optional(v.nullable(Text(100))),
  launcher_text: v.optional(v.nullable(Text(100))),
  avatar_url: v.optional(v.nullable(HttpUrl)),
  welcome_message: v.optional(v.nullable(Text(1_000))),
})
export const WidgetPatch = v.strictObject({
  allowed_domains: v.optional(v.pipe(v.array(Domain), v.maxLength(50, 'At most 50 domains.'))),
  appearance: v.optional(AppearancePatch),
})
export type WidgetPatch = v.InferOutput<typeof WidgetPatch>

export const VoicePatch = v.strictObject({
  voice_id: AgentPatch.entries.voice_id,
  voice_locale: AgentPatch.entries.voice_locale,
  speaking_rate: AgentPatch.entries.speaking_rate,
  barge_in: AgentPatch.entries.barge_in,
  end_of_speech_ms: AgentPatch.entries.end_of_speech_ms,
  style: AgentPatch.entries.voice_style,
})
export type VoicePatch = v.InferOutput<typeof VoicePatch>
export const VoiceResult = v.object({ voice: VoiceConfig, agent_version: v.string() })

const AgentIdQ = v.pipe(v.string(), v.regex(/^agt_\d{1,18}$/, coded('invalid_id', 'agent_id is agt_<n>.')))
const AccountIdQ = v.pipe(
  v.string(),
  v.regex(/^(acc|usr)_\d{1,18}$/, coded('invalid_id', 'account_id is acc_<n> or usr_<n>.')),
  v.transform((s) => s.replace(/^usr_/, 'acc_')),
)
export const AgentVersionsQuery = v.object({
  account_id: v.optional(v.array(AccountIdQ)),
  agent_id: v.optional(AgentIdQ),
  from: v.optional(Timestamp),
  to: v.optional(Timestamp),
  limit: Limit(100, 50),
  cursor: Cursor,
})
export const AgentVersionMarker = v.object({
  agent_id: v.string(),
  account_id: v.string(),
  agent_version: v.string(),
  prompt_version: Str,
  reason: v.string(),
  changed: v.array(v.string()),
  deployed_at: Ts,
})
