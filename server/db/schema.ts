// The one schema for PostgreSQL and PGlite. Ids are `prefix_<n>` minted from sequences in SQL defaults,
// so every writer (any instance, any engine) gets the same shape without application-side counters.
import { sql } from 'drizzle-orm'
import {
  bigint,
  boolean,
  date,
  doublePrecision,
  index,
  integer,
  jsonb,
  numeric,
  pgSequence,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 })
const now = (name: string) => ts(name).notNull().defaultNow()

// A user id and its account id share the number (usr_7 ↔ acc_7), so one sequence mints both.
export const tenantSeq = pgSequence('tenant_seq', { startWith: 1 })

export const accounts = pgTable(
  'accounts',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    status: text('status').notNull().default('active'),
    plan: text('plan').notNull(),
    planExpiresAt: ts('plan_expires_at'),
    externalIds: jsonb('external_ids').$type<Record<string, string>>().notNull().default({}),
    defaultRedaction: boolean('default_redaction').notNull().default(false),
    transcriptRetentionDays: integer('transcript_retention_days'),
    createdAt: now('created_at'),
    updatedAt: now('updated_at'),
  },
  (t) => [index('accounts_created_idx').on(t.createdAt, t.id)],
)

export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    email: text('email').notNull(),
    name: text('name'),
    companyName: text('company_name'),
    language: text('language'),
    timezone: text('timezone'),
    currencyCode: text('currency_code').notNull().default('USD'),
    externalIds: jsonb('external_ids').$type<Record<string, string>>().notNull().default({}),
    passwordHash: text('password_hash').notNull(),
    /** The partner (a user holding partners:manage) that created this user as its member (POST /partners/members). */
    partnerId: text('partner_id'),
    passwordGenerated: boolean('password_generated').notNull().default(false),
    status: text('status').notNull().default('active'),
    limits: jsonb('limits').$type<Record<string, number>>().notNull().default({}),
    createdAt: now('created_at'),
    updatedAt: now('updated_at'),
  },
  (t) => [
    uniqueIndex('users_email_uq').on(sql`lower(${t.email})`),
    index('users_created_idx').on(t.createdAt, t.id),
    index('users_partner_idx').on(t.partnerId, t.createdAt, t.id).where(sql`partner_id IS NOT NULL`),
  ],
)

export const subscriptions = pgTable('subscriptions', {
  accountId: text('account_id')
    .primaryKey()
    .references(() => accounts.id),
  plan: text('plan').notNull(),
  status: text('status').notNull().default('active'),
  planLimit: numeric('plan_limit', { precision: 12, scale: 2, mode: 'number' }).notNull().default(0),
  walletBalance: numeric('wallet_balance', { precision: 12, scale: 4, mode: 'number' }).notNull().default(0),
  createdAt: now('created_at'),
  updatedAt: now('updated_at'),
})

// Idempotency-Key header (decisions): keyed by credential, method and path; 24 h.
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    credentialId: text('credential_id').notNull(),
    method: text('method').notNull(),
    path: text('path').notNull(),
    key: text('key').notNull(),
    bodyHash: text('body_hash').notNull(),
    state: text('state').notNull().default('running'),
    statusCode: integer('status_code'),
    response: jsonb('response'),
    createdAt: now('created_at'),
  },
  (t) => [
    uniqueIndex('idempotency_keys_pk').on(t.credentialId, t.method, t.path, t.key),
    index('idempotency_keys_created_idx').on(t.createdAt),
  ],
)

export const apiKeySeq = pgSequence('api_key_seq', { startWith: 1 })

// Personal keys. Only the SHA-256 of the secret is stored; key_prefix (24 characters) identifies it in lists.
export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey().default(sql`'key_' || nextval('api_key_seq')`),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    name: text('name'),
    keyHash: text('key_hash').notNull(),
    keyPrefix: text('key_prefix').notNull(),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    accountIds: jsonb('account_ids').$type<string[]>().notNull(),
    environment: text('environment').notNull().default('live'),
    ipAllowlist: jsonb('ip_allowlist').$type<string[]>().notNull().default([]),
    status: text('status').notNull().default('active'),
    expiresAt: ts('expires_at').notNull(),
    rotatedFrom: text('rotated_from'),
    revokedAt: ts('revoked_at'),
    /** api (REST), dashboard (session routes) or oauth (minted for an OAuth connection). */
    source: text('source').notNull().default('api'),
    createdAt: now('created_at'),
    updatedAt: now('updated_at'),
  },
  (t) => [
    uniqueIndex('api_keys_hash_uq').on(t.keyHash),
    index('api_keys_user_idx').on(t.userId, t.createdAt, t.id),
    index('api_keys_created_idx').on(t.createdAt, t.id),
  ],
)

// One row per metered request. Keyset on (created_at, id); retained 12 months by a sweep.
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    requestId: text('request_id').notNull(),
    credentialType: text('credential_type'),
    credentialId: text('credential_id'),
    accountIds: jsonb('account_ids').$type<string[]>().notNull().default([]),
    crossAccount: boolean('cross_account').notNull().default(false),
    method: text('method').notNull(),
    path: text('path').notNull(),
    statusCode: integer('status_code').notNull(),
    errorCode: text('error_code'),
    ip: text('ip'),
    userAgent: text('user_agent'),
    durationMs: integer('duration_ms').notNull(),
    createdAt: now('created_at'),
  },
  (t) => [
    index('audit_created_idx').on(t.createdAt, t.id),
    index('audit_credential_idx').on(t.credentialId, t.createdAt),
  ],
)

// Dashboard sessions and one-time login links; only hashes of their tokens are stored.
export const sessions = pgTable(
  'sessions',
  {
    tokenHash: text('token_hash').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    createdAt: now('created_at'),
    expiresAt: ts('expires_at').notNull(),
    revokedAt: ts('revoked_at'),
    // The ceiling the session acts under (decisions "Login links"): null scopes = every grantable scope.
    scopes: jsonb('scopes').$type<string[]>(),
    ipAllowlist: jsonb('ip_allowlist').$type<string[]>().notNull().default([]),
  },
  // A password change ends every live session of the user (decisions "Password reset"): found by user,
  // not by a scan of every session ever opened.
  (t) => [index('sessions_user_live_idx').on(t.userId).where(sql`revoked_at IS NULL`)],
)

export const loginLinks = pgTable('login_links', {
  tokenHash: text('token_hash').primaryKey(),
  userId: text('user_id')
    .notNull()
    .references(() => users.id),
  createdAt: now('created_at'),
  expiresAt: ts('expires_at').notNull(),
  usedAt: ts('used_at'),
  // The issuing credential's scopes and ip_allowlist, handed to the session the link opens.
  scopes: jsonb('scopes').$type<string[]>(),
  ipAllowlist: jsonb('ip_allowlist').$type<string[]>().notNull().default([]),
})

// Password-reset links (POST /api/auth/password-reset): at most one live token per user, its SHA-256 only.
// A new request replaces the row, so only the newest mailed link works; confirming deletes it (single use).
export const passwordResets = pgTable('password_resets', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id),
  tokenHash: text('token_hash').notNull().unique(),
  createdAt: now('created_at'),
  expiresAt: ts('expires_at').notNull(),
})

// Daily quota counters (reset 00:00 UTC by keying on the UTC day).
export const quotaUsage = pgTable(
  'quota_usage',
  {
    accountId: text('account_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    kind: text('kind').notNull(),
    used: integer('used').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.day, t.kind] })],
)

// Browser-side widget events (issue 17), counted per agent, UTC day and type; nothing else of them is kept.
export const widgetEventCounts = pgTable(
  'widget_event_counts',
  {
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    agentId: text('agent_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    type: text('type').notNull(),
    count: integer('count').notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.agentId, t.day, t.type] }),
    index('widget_event_counts_account_day_idx').on(t.accountId, t.day),
  ],
)

// Billed usage, one row per billed session (written by conversations and calls).
export const usageRecords = pgTable(
  'usage_records',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    agentId: text('agent_id'),
    agentType: text('agent_type'),
    channel: text('channel').notNull(),
    sessionId: text('session_id').notNull(),
    startedAt: ts('started_at').notNull(),
    endedAt: ts('ended_at'),
    /** Duration reported by the telephony provider, when there is one. */
    telephonySeconds: integer('telephony_seconds'),
    tokens: integer('tokens').notNull().default(0),
    costUsd: numeric('cost_usd', { precision: 14, scale: 6, mode: 'number' }).notNull().default(0),
    createdAt: now('created_at'),
  },
  (t) => [
    index('usage_account_started_idx').on(t.accountId, t.startedAt),
    uniqueIndex('usage_session_uq').on(t.accountId, t.sessionId),
  ],
)

// Agents (issue 4). Created only by the asynchronous build (createAgentRecord, applyBuildOutputs).
// Behavioural fields of the patch whitelist are columns; the non-behavioural ones (decisions "Agent patch
// whitelist") live in `settings`, a jsonb object keyed by their API names. agent_version is
// `agt<n>-v<version_n>`.
export const agentSeq = pgSequence('agent_seq', { startWith: 1 })

export const agents = pgTable(
  'agents',
  {
    id: text('id').primaryKey().default(sql`'agt_' || nextval('agent_seq')`),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    name: text('name').notNull(),
    /** chat, phone, dashboard or phone_outbound. */
    agentType: text('agent_type').notNull().default('chat'),
    versionN: integer('version_n').notNull().default(0),
    /** Bumped by triggers (migration 0010) on every change of the row and of its knowledge (kb_documents,
     *  kb_summaries): the chat turn's agent cache is valid while this is unchanged. */
    revision: bigint('revision', { mode: 'number' }).notNull().default(0),
    /** Label of the most recently deployed prompt version; null until a deploy. */
    promptVersion: text('prompt_version'),
    websiteUrl: text('website_url'),
    // Behavioural (19): prompts, build outputs and refinement rules, model, capabilities, voice.
    instructions: text('instructions'),
    chatInstructions: text('chat_instructions'),
    voiceChatInstructions: text('voice_chat_instructions'),
    role: text('role'),
    greetingInitial: text('greeting_initial'),
    businessName: text('business_name'),
    businessProfile: text('business_profile'),
    conversationStyle: text('conversation_style'),
    refinementRules: jsonb('refinement_rules').$type<string[]>().notNull().default([]),
    aiProvider: text('ai_provider').notNull().default('openai'),
    useLargeModel: boolean('use_large_model').notNull().default(false),
    temperature: doublePrecision('temperature').notNull().default(0.7),
    maxResponseTokens: integer('max_response_tokens'),
    capabilities: jsonb('capabilities').$type<string[]>().notNull().default([]),
    capabilitySettings: jsonb('capability_settings').$type<Record<string, unknown>>().notNull().default({}),
    voiceId: text('voice_id'),
    voiceLocale: text('voice_locale'),
    speakingRate: doublePrecision('speaking_rate').notNull().default(1),
    bargeIn: boolean('barge_in').notNull().default(true),
    /** Bumped by every change of the `analysis` setting (decisions "Conversation analysis"); 0: never set. */
    analysisVersion: integer('analysis_version').notNull().default(0),
    /** Non-behavioural whitelist fields other than name and website_url, by API name. */
    settings: jsonb('settings').$type<Record<string, unknown>>().notNull().default({}),
    // Widget: the public token is null until minted (non-empty allowed_domains or regenerate-token).
    /** Set by an operator (POST /admin/agents/{agt}/actions pause): the agent refuses new conversations and calls. */
    pausedAt: ts('paused_at'),
    publicToken: text('public_token'),
    allowedDomains: jsonb('allowed_domains').$type<string[]>().notNull().default([]),
    appearance: jsonb('appearance').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: now('created_at'),
    updatedAt: now('updated_at'),
  },
  (t) => [
    index('agents_account_created_idx').on(t.accountId, t.createdAt, t.id),
    uniqueIndex('agents_public_token_uq').on(t.publicToken),
  ],
)

export const promptVersionSeq = pgSequence('prompt_version_seq', { startWith: 1 })

// Immutable prompt versions; one active per agent and type (phone, chat, voice_chat).
export const promptVersions = pgTable(
  'prompt_versions',
  {
    id: text('id').primaryKey().default(sql`'pv_' || nextval('prompt_version_seq')`),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    type: text('type').notNull(),
    body: text('body'),
    label: text('label').notNull(),
    notes: text('notes'),
    restoredFrom: text('restored_from'),
    agentVersion: text('agent_version').notNull(),
    deployedAt: now('deployed_at'),
    active: boolean('active').notNull().default(true),
  },
  (t) => [
    uniqueIndex('prompt_versions_label_uq').on(t.agentId, t.label),
    uniqueIndex('prompt_versions_active_uq').on(t.agentId, t.type).where(sql`${t.active}`),
    index('prompt_versions_agent_idx').on(t.agentId, t.deployedAt, t.id),
  ],
)

// Deploy markers: one row per agent_version (GET /agent-versions), keyset on (deployed_at, id).
export const agentVersions = pgTable(
  'agent_versions',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    agentVersion: text('agent_version').notNull(),
    promptVersion: text('prompt_version'),
    /** build, patch, prompt_deploy, prompt_restore or voice. */
    reason: text('reason').notNull(),
    changed: jsonb('changed').$type<string[]>().notNull().default([]),
    deployedAt: now('deployed_at'),
  },
  (t) => [
    uniqueIndex('agent_versions_version_uq').on(t.agentId, t.agentVersion),
    index('agent_versions_account_idx').on(t.accountId, t.deployedAt, t.id),
  ],
)

export const agentBuildSeq = pgSequence('agent_build_seq', { startWith: 1 })

export interface BuildStep {
  name: string
  status: string
  started_at: string | null
  finished_at: string | null
  error: string | null
}

export const agentBuilds = pgTable(
  'agent_builds',
  {
    id: text('id').primaryKey().default(sql`'bld_' || nextval('agent_build_seq')`),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    /** queued, running, succeeded or failed. */
    status: text('status').notNull().default('queued'),
    steps: jsonb('steps').$type<BuildStep[]>().notNull().default([]),
    fromStep: text('from_step'),
    /** 1, 2, … per agent: prompt labels build-<n>-<surface>. */
    buildNumber: integer('build_number').notNull().default(1),
    /** What earlier steps produced for later ones (business name, greeting), kept so a re-run can start mid-way. */
    outputs: jsonb('outputs').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: now('created_at'),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [index('agent_builds_agent_idx').on(t.agentId, t.createdAt)],
)

// One sequence for every knowledge document: doc_f<n> (file, text) and doc_c<n> (crawled page) share the
// numbers, so ids never collide across kinds. Writers mint the id (see nextDocumentId).
export const kbDocumentSeq = pgSequence('kb_document_seq', { startWith: 1 })

export const kbDocuments = pgTable(
  'kb_documents',
  {
    id: text('id').primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    /** file, text or page. */
    kind: text('kind').notNull(),
    title: text('title'),
    url: text('url'),
    /** processing, indexed or failed. */
    status: text('status').notNull().default('processing'),
    error: text('error'),
    text: text('text'),
    language: text('language'),
    keepVerbatim: boolean('keep_verbatim').notNull().default(false),
    verbatimInCalls: boolean('verbatim_in_calls').notNull().default(false),
    chars: integer('chars').notNull().default(0),
    crawlId: text('crawl_id'),
    /** upload, text, url (one page), crawl (a site crawl) or build (the build's crawl). */
    source: text('source').notNull().default('text'),
    mimeType: text('mime_type'),
    bytes: integer('bytes'),
    /** unstorage key of the original upload, when there is one. */
    blobKey: text('blob_key'),
    contentHash: text('content_hash'),
    /** Validators of the last fetch of a page (decisions "Knowledge sync"): sent back as If-None-Match and
     *  If-Modified-Since by the next sync; fetched_at is compared with the sitemap's lastmod. */
    etag: text('etag'),
    lastModified: text('last_modified'),
    fetchedAt: ts('fetched_at'),
    /** When the summary last read this document; null or older than updated_at means pending. */
    summarizedAt: ts('summarized_at'),
    createdAt: now('created_at'),
    updatedAt: now('updated_at'),
  },
  (t) => [index('kb_documents_agent_idx').on(t.agentId, t.createdAt, t.kind, t.id)],
)

// The knowledge summary of an agent: one text that every surface reads (contract "Runtime knowledge
// rules"). Written by the build's summary step and by reindex; a manual replace is overwritten by the next.
export const kbSummaries = pgTable('kb_summaries', {
  agentId: text('agent_id')
    .primaryKey()
    .references(() => agents.id),
  accountId: text('account_id')
    .notNull()
    .references(() => accounts.id),
  text: text('text').notNull().default(''),
  /** Moves on every write, so callers can see a rebuild happened. */
  version: integer('version').notNull().default(0),
  /** build, reindex or manual. */
  source: text('source').notNull().default('build'),
  /** Set by new or changed documents; never clears on its own, only by a rebuild. */
  stale: boolean('stale').notNull().default(false),
  lastJob: jsonb('last_job').$type<Record<string, unknown> | null>(),
  updatedAt: now('updated_at'),
})

export const kbCrawlSeq = pgSequence('kb_crawl_seq', { startWith: 1 })

// Knowledge-base crawls ({url, mode}): a site crawl surfaces its pages as doc_c documents.
export const kbCrawls = pgTable(
  'kb_crawls',
  {
    id: text('id').primaryKey().default(sql`'crl_' || nextval('kb_crawl_seq')`),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    startUrl: text('start_url').notNull(),
    /** page or site. */
    mode: text('mode').notNull(),
    /** queued, running, succeeded or failed. */
    status: text('status').notNull().default('queued'),
    pages: integer('pages').notNull().default(0),
    error: text('error'),
    createdAt: now('created_at'),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [index('kb_crawls_agent_idx').on(t.agentId, t.createdAt)],
)

// Conversation ids are conv_<store letter><n> (p: API and widget chat, u: phone and realtime voice,
// d: dashboard chat) from one sequence, so the number alone never repeats across stores.
export const conversationSeq = pgSequence('conversation_seq', { startWith: 1 })

export const conversations = pgTable(
  'conversations',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    agentId: text('agent_id').references(() => agents.id),
    agentType: text('agent_type').notNull(),
    /** api, widget, phone_inbound, phone_outbound, voice_chat, dashboard, import. */
    channel: text('channel').notNull(),
    /** in_progress, completed, abandoned, failed. */
    status: text('status').notNull().default('in_progress'),
    sessionId: text('session_id').notNull(),
    externalSessionId: text('external_session_id'),
    // Stamped at creation, never changed afterwards (contract "Versioning").
    agentVersion: text('agent_version'),
    promptVersion: text('prompt_version'),
    model: text('model'),
    startedAt: ts('started_at').notNull(),
    endedAt: ts('ended_at'),
    /** Moves on changes to status, transcript, summary or identity (the updated_since filter). */
    updatedAt: now('updated_at'),
    identity: jsonb('identity').$type<Record<string, unknown>>().notNull().default({}),
    /** True when identity has email, phone_e164 or partner_agent_id (the has_identity filter). */
    hasIdentity: boolean('has_identity').notNull().default(false),
    custom: jsonb('custom').$type<Record<string, unknown>>().notNull().default({}),
    metrics: jsonb('metrics').$type<Record<string, unknown>>().notNull().default({}),
    /** The structured summary (decisions "Summary object"); null until ready. */
    summary: jsonb('summary').$type<Record<string, unknown> | null>(),
    summaryStatus: text('summary_status').notNull().default('pending'),
    outcome: text('outcome'),
    escalated: boolean('escalated').notNull().default(false),
    language: text('language'),
    hasRecording: boolean('has_recording').notNull().default(false),
    recording: jsonb('recording').$type<Record<string, unknown> | null>(),
    /** Leads, tickets and orders that tools stored on the conversation. */
    records: jsonb('records').$type<Record<string, unknown>[]>().notNull().default([]),
    turnCount: integer('turn_count').notNull().default(0),
    /** One turn at a time across instances: a message claims the conversation until this time. */
    turnLockedUntil: ts('turn_locked_until'),
    /** Edge-supplied country; the visitor IP itself is never stored. */
    country: text('country'),
    deletedAt: ts('deleted_at'),
    deleteReason: text('delete_reason'),
    /** Widget conversations: SHA-256 hex of the visitor token handed out once at creation (issue 17). */
    visitorTokenHash: text('visitor_token_hash'),
    /** Live voice conversations (phone, voice chat): the instance whose memory holds the session, so that
     *  the others close it when that instance dies (calls/reconcile.ts). Outbound calls also keep theirs on the call. */
    ownerInstance: text('owner_instance'),
    /** decisions "utm": {source, medium, campaign, term, content}; absent keys read as null. */
    utm: jsonb('utm').$type<Record<string, string | null>>().notNull().default({}),
    /** A phone test of an agent test run (decisions "Test runs"): the run that opened this call. Such a
     *  conversation is in no list, is not billed and is deleted when its test has been read. */
    testRunId: text('test_run_id'),
    /** The newest analysis (decisions "Conversation analysis"), a copy of its conversation_analyses row so
     *  the list can build it in SQL like the summary; null until the first analysis is written. */
    analysis: jsonb('analysis').$type<Record<string, unknown>>(),
  },
  (t) => [
    // The idle sweep (decisions "Idle conversations"): open text conversations by last activity.
    index('conversations_idle_idx').on(t.updatedAt).where(sql`status = 'in_progress' AND channel IN ('api', 'widget')`),
    // The hold sweep (decisions "Turn holds"): text conversations whose turn hold is set, by its end.
    index('conversations_held_idx')
      .on(t.turnLockedUntil)
      .where(sql`turn_locked_until IS NOT NULL AND channel IN ('api', 'widget')`),
    index('conversations_owned_live_idx')
      .on(t.ownerInstance)
      .where(sql`status = 'in_progress' AND owner_instance IS NOT NULL`),
    // Every list read is `account_id = … AND deleted_at IS NULL` ordered by (started_at|updated_at, id): the
    // live indexes are partial, so tombstoned rows are not in them (decisions "Chat runtime (continued)").
    index('conversations_live_started_idx').on(t.accountId, t.startedAt, t.id).where(sql`deleted_at IS NULL`),
    index('conversations_live_updated_idx').on(t.accountId, t.updatedAt, t.id).where(sql`deleted_at IS NULL`),
    index('conversations_live_agent_started_idx')
      .on(t.accountId, t.agentId, t.startedAt, t.id)
      .where(sql`deleted_at IS NULL`),
    index('conversations_live_channel_started_idx')
      .on(t.accountId, t.channel, t.startedAt, t.id)
      .where(sql`deleted_at IS NULL`),
    index('conversations_live_status_started_idx')
      .on(t.accountId, t.status, t.startedAt, t.id)
      .where(sql`deleted_at IS NULL`),
    index('conversations_live_outcome_started_idx')
      .on(t.accountId, t.outcome, t.startedAt, t.id)
      .where(sql`deleted_at IS NULL`),
    // Flags that are usually false: only the true side is indexed (the list writes them as literals, not parameters).
    index('conversations_live_escalated_started_idx')
      .on(t.accountId, t.startedAt, t.id)
      .where(sql`escalated AND deleted_at IS NULL`),
    index('conversations_live_recording_started_idx')
      .on(t.accountId, t.startedAt, t.id)
      .where(sql`has_recording AND deleted_at IS NULL`),
    index('conversations_live_external_session_idx')
      .on(t.accountId, t.externalSessionId, t.startedAt, t.id)
      .where(sql`deleted_at IS NULL`),
    // recentCallsFor (the inbound phone history block): a point lookup by caller number.
    index('conversations_live_phone_started_idx')
      .on(t.accountId, sql`(identity->>'phone_e164')`, t.startedAt)
      .where(sql`deleted_at IS NULL`),
    index('conversations_deleted_idx').on(t.accountId, t.deletedAt, t.id).where(sql`deleted_at IS NOT NULL`),
    uniqueIndex('conversations_session_uq').on(t.accountId, t.sessionId),
  ],
)

/** Where a voice answer's wait went (decisions "Turn latency"); each stage in ms, null when it did not run. */
export interface LatencyBreakdown {
  endpoint_ms: number | null
  stt_ms: number | null
  llm_first_token_ms: number | null
  tts_first_byte_ms: number | null
}

export const turns = pgTable(
  'turns',
  {
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id),
    turnIndex: integer('turn_index').notNull(),
    /** agent, visitor, human_agent. */
    speaker: text('speaker').notNull(),
    text: text('text').notNull(),
    timestamp: ts('timestamp').notNull(),
    latencyMs: integer('latency_ms'),
    /** Voice answers: {endpoint_ms, stt_ms, llm_first_token_ms, tts_first_byte_ms}; null elsewhere. */
    latencyBreakdown: jsonb('latency_breakdown').$type<LatencyBreakdown | null>(),
    /** greeting, message, answer, tool, handoff. */
    turnType: text('turn_type').notNull(),
    detectedIntent: text('detected_intent'),
    detectedLanguage: text('detected_language'),
    unanswered: boolean('unanswered').notNull().default(false),
    humanAgentId: text('human_agent_id'),
    audioOffsetMs: integer('audio_offset_ms'),
    audioDurationMs: integer('audio_duration_ms'),
    /** A tool call and its result, on tool turns. */
    tool: jsonb('tool').$type<Record<string, unknown> | null>(),
    tokensIn: integer('tokens_in').notNull().default(0),
    tokensOut: integer('tokens_out').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.conversationId, t.turnIndex] })],
)

// POST …/messages idempotency_key (decisions "Idempotency"): per conversation, 24 hours.
export const messageKeys = pgTable(
  'message_keys',
  {
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id),
    key: text('key').notNull(),
    textHash: text('text_hash').notNull(),
    response: jsonb('response').$type<Record<string, unknown> | null>(),
    createdAt: now('created_at'),
  },
  (t) => [primaryKey({ columns: [t.conversationId, t.key] }), index('message_keys_created_idx').on(t.createdAt)],
)

// The events outbox: written in the same transaction as the change that caused the event; a delivery
// job fans out to webhook endpoints (issue 7). Payload per decisions "Events".
export const events = pgTable(
  'events',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    type: text('type').notNull(),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    createdAt: now('created_at'),
    dispatchedAt: ts('dispatched_at'),
  },
  (t) => [
    index('events_undispatched_idx').on(t.dispatchedAt, t.createdAt),
    index('events_account_idx').on(t.accountId, t.createdAt),
  ],
)

// E-mails sent through the mailer provider; the default `outbox` provider only records them here,
// which is how integrators and tests observe what a capability sent.
export const mailOutbox = pgTable(
  'mail_outbox',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id'),
    provider: text('provider').notNull(),
    to: jsonb('to').$type<string[]>().notNull(),
    subject: text('subject').notNull(),
    text: text('text').notNull(),
    tags: jsonb('tags').$type<Record<string, string>>().notNull().default({}),
    /** queued, sent or failed. */
    status: text('status').notNull().default('sent'),
    error: text('error'),
    createdAt: now('created_at'),
  },
  (t) => [index('mail_outbox_account_idx').on(t.accountId, t.createdAt)],
)

// Webhooks (issue 7). Endpoints keep their signing secrets encrypted (AES-256-GCM keyed from
// SVC_SECRET); after a rotation the previous secret keeps signing until previous_secret_expires_at.
export const webhookEndpointSeq = pgSequence('webhook_endpoint_seq', { startWith: 1 })

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey().default(sql`'whk_' || nextval('webhook_endpoint_seq')`),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    url: text('url').notNull(),
    description: text('description'),
    events: jsonb('events').$type<string[]>().notNull(),
    enabled: boolean('enabled').notNull().default(true),
    secretEnc: text('secret_enc').notNull(),
    previousSecretEnc: text('previous_secret_enc'),
    previousSecretExpiresAt: ts('previous_secret_expires_at'),
    createdAt: now('created_at'),
    updatedAt: now('updated_at'),
    deletedAt: ts('deleted_at'),
  },
  (t) => [index('webhook_endpoints_account_idx').on(t.accountId, t.createdAt)],
)

// One row per (event, endpoint) fan-out, plus one per replay. `body` is the exact JSON sent, so every
// attempt and every replay signs the same bytes. A claim sets claim_token and locked_until (a lease):
// a process that dies mid-send leaves a lease that lapses, and the delivery is sent again.
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id),
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    body: text('body').notNull(),
    /** pending, retrying, succeeded, exhausted. */
    status: text('status').notNull().default('pending'),
    attemptCount: integer('attempt_count').notNull().default(0),
    attempts: jsonb('attempts')
      .$type<{ attempt: number; at: string; status_code: number | null; latency_ms: number; error: string | null }[]>()
      .notNull()
      .default([]),
    nextAttemptAt: ts('next_attempt_at'),
    lockedUntil: ts('locked_until'),
    claimToken: text('claim_token'),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    replayedFrom: text('replayed_from'),
    deliveredAt: ts('delivered_at'),
    createdAt: now('created_at'),
    updatedAt: now('updated_at'),
  },
  (t) => [
    index('webhook_deliveries_account_idx').on(t.accountId, t.createdAt, t.id),
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`status IN ('pending', 'retrying')`),
    index('webhook_deliveries_event_idx').on(t.eventId),
    uniqueIndex('webhook_deliveries_fanout_idx').on(t.endpointId, t.eventId).where(sql`replayed_from IS NULL`),
  ],
)

// OAuth 2.1 authorization server for the assistant connector (issue 8). Clients come from dynamic
// registration and belong to nobody until a user consents; a grant (`ocn_<n>`, the dashboard's
// "connection") ties a client to the user and the personal key minted on consent. Codes and tokens are
// stored as SHA-256 hashes only.
export const oauthClients = pgTable('oauth_clients', {
  id: text('id').primaryKey(),
  /** SHA-256 hex of the client secret; null for public clients (token_endpoint_auth_method none). */
  secretHash: text('secret_hash'),
  tokenEndpointAuthMethod: text('token_endpoint_auth_method').notNull(),
  redirectUris: jsonb('redirect_uris').$type<string[]>().notNull(),
  /** The validated registration metadata, echoed by registration. */
  metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull(),
  clientName: text('client_name'),
  createdAt: now('created_at'),
  lastUsedAt: ts('last_used_at'),
  deletedAt: ts('deleted_at'),
})

export const oauthGrantSeq = pgSequence('oauth_grant_seq', { startWith: 1 })

export const oauthGrants = pgTable(
  'oauth_grants',
  {
    id: text('id').primaryKey().default(sql`'ocn_' || nextval('oauth_grant_seq')`),
    clientId: text('client_id')
      .notNull()
      .references(() => oauthClients.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    keyId: text('key_id')
      .notNull()
      .references(() => apiKeys.id),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    /** The canonical RFC 8707 resource the grant was issued for. */
    resource: text('resource').notNull(),
    createdAt: now('created_at'),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [index('oauth_grants_user_idx').on(t.userId, t.createdAt), index('oauth_grants_key_idx').on(t.keyId)],
)

export const oauthCodes = pgTable('oauth_codes', {
  codeHash: text('code_hash').primaryKey(),
  grantId: text('grant_id')
    .notNull()
    .references(() => oauthGrants.id),
  clientId: text('client_id').notNull(),
  redirectUri: text('redirect_uri').notNull(),
  codeChallenge: text('code_challenge').notNull(),
  resource: text('resource').notNull(),
  scopes: jsonb('scopes').$type<string[]>().notNull(),
  expiresAt: ts('expires_at').notNull(),
  usedAt: ts('used_at'),
  createdAt: now('created_at'),
})

export const oauthTokens = pgTable(
  'oauth_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    grantId: text('grant_id')
      .notNull()
      .references(() => oauthGrants.id),
    /** access (svc_at_) or refresh (svc_rt_). */
    kind: text('kind').notNull(),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    expiresAt: ts('expires_at').notNull(),
    /** Refresh tokens: when the token was first exchanged (rotated); reuse is judged against it. */
    rotatedAt: ts('rotated_at'),
    revokedAt: ts('revoked_at'),
    createdAt: now('created_at'),
  },
  (t) => [index('oauth_tokens_grant_idx').on(t.grantId)],
)

// Phone numbers (num_<n>): a number is held by one account at most (any account: 409 number_taken), and
// routes its inbound calls to the assigned agent. The inbound webhook finds it by e164 alone.
export const phoneNumberSeq = pgSequence('phone_number_seq', { startWith: 1 })

export const phoneNumbers = pgTable(
  'phone_numbers',
  {
    id: text('id').primaryKey().default(sql`'num_' || nextval('phone_number_seq')`),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    e164: text('e164').notNull(),
    provider: text('provider').notNull(),
    agentId: text('agent_id').references(() => agents.id),
    label: text('label'),
    createdAt: now('created_at'),
    updatedAt: now('updated_at'),
  },
  (t) => [
    uniqueIndex('phone_numbers_e164_uq').on(t.e164),
    index('phone_numbers_account_idx').on(t.accountId, t.createdAt, t.id),
    index('phone_numbers_agent_idx').on(t.accountId, t.agentId),
  ],
)

// The do-not-call list (dnc_<n>), one entry per (account, number). Callers who opt out on a call land
// here with source opt_out; the outbound issue adds the routes and checks it at every dial.
export const dncSeq = pgSequence('dnc_seq', { startWith: 1 })

export const dncEntries = pgTable(
  'dnc_entries',
  {
    id: text('id').primaryKey().default(sql`'dnc_' || nextval('dnc_seq')`),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    phoneE164: text('phone_e164').notNull(),
    reason: text('reason'),
    source: text('source').notNull(),
    createdAt: now('created_at'),
  },
  (t) => [
    uniqueIndex('dnc_entries_account_phone_uq').on(t.accountId, t.phoneE164),
    index('dnc_entries_account_created_idx').on(t.accountId, t.createdAt, t.id),
  ],
)

// Contact lists (lst_<n>) of an agent, the numbers an outbound campaign dials, filled by CSV or JSON
// imports. default_region lets an import read national-format numbers (ISO 3166 alpha-2, e.g. GB).
export const contactListSeq = pgSequence('contact_list_seq', { startWith: 1 })

export const contactLists = pgTable(
  'contact_lists',
  {
    id: text('id').primaryKey().default(sql`'lst_' || nextval('contact_list_seq')`),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    defaultRegion: text('default_region'),
    itemCount: integer('item_count').notNull().default(0),
    createdAt: now('created_at'),
    updatedAt: now('updated_at'),
  },
  (t) => [index('contact_lists_agent_created_idx').on(t.accountId, t.agentId, t.createdAt, t.id)],
)

// One number per list (unique (list_id, phone_e164)): an import skips numbers already listed. Whether a
// number is on the do-not-call list is read at query time, not stored here.
export const contactItemSeq = pgSequence('contact_item_seq', { startWith: 1 })

export const contactListItems = pgTable(
  'contact_list_items',
  {
    id: text('id').primaryKey().default(sql`'itm_' || nextval('contact_item_seq')`),
    listId: text('list_id')
      .notNull()
      .references(() => contactLists.id, { onDelete: 'cascade' }),
    phoneE164: text('phone_e164').notNull(),
    name: text('name'),
    timezone: text('timezone'),
    variables: jsonb('variables').$type<Record<string, string>>().notNull().default({}),
    createdAt: now('created_at'),
  },
  (t) => [
    uniqueIndex('contact_list_items_list_phone_uq').on(t.listId, t.phoneE164),
    index('contact_list_items_list_created_idx').on(t.listId, t.createdAt, t.id),
  ],
)

// Outbound profiles (prf_<n>): a stored outbound role of an agent. status draft until a build writes its
// prompt (profile_builds, one step instructions), then ready; the prompt is an immutable
// profile_prompt_versions row (pv_<n> from the agents' sequence, so pv ids stay unique) whose label is
// the profile's prompt_version.
export const profileSeq = pgSequence('profile_seq', { startWith: 1 })

export const profiles = pgTable(
  'profiles',
  {
    id: text('id').primaryKey().default(sql`'prf_' || nextval('profile_seq')`),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    name: text('name').notNull(),
    role: text('role').notNull(),
    goal: text('goal'),
    greeting: text('greeting'),
    /** Derived from the {{name}} placeholders of role and greeting, in order of first appearance. */
    variables: jsonb('variables').$type<string[]>().notNull().default([]),
    capabilities: jsonb('capabilities').$type<string[]>().notNull().default([]),
    /** Unused since hang_up became the only voicemail policy (profiles have no voicemail_message); left
     *  in place for a later migration to drop. */
    voicemailMessage: text('voicemail_message'),
    maxCallDurationS: integer('max_call_duration_s').notNull().default(600),
    /** draft or ready. */
    status: text('status').notNull().default('draft'),
    /** Label of the last built profile_prompt_versions row, or null before the first build. */
    promptVersion: text('prompt_version'),
    createdAt: now('created_at'),
    updatedAt: now('updated_at'),
  },
  (t) => [index('profiles_agent_idx').on(t.agentId, t.createdAt, t.id), index('profiles_account_idx').on(t.accountId)],
)

// Builds of a profile: the agent build's shape (ids from the same sequence), one step instructions.
export const profileBuilds = pgTable(
  'profile_builds',
  {
    id: text('id').primaryKey().default(sql`'bld_' || nextval('agent_build_seq')`),
    profileId: text('profile_id')
      .notNull()
      .references(() => profiles.id),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    status: text('status').notNull().default('queued'),
    steps: jsonb('steps').$type<BuildStep[]>().notNull().default([]),
    buildNumber: integer('build_number').notNull().default(1),
    createdAt: now('created_at'),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [index('profile_builds_profile_idx').on(t.profileId, t.buildNumber)],
)

// Immutable outbound prompts of a profile; label build-<n>, unique per profile.
export const profilePromptVersions = pgTable(
  'profile_prompt_versions',
  {
    id: text('id').primaryKey().default(sql`'pv_' || nextval('prompt_version_seq')`),
    profileId: text('profile_id')
      .notNull()
      .references(() => profiles.id),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    type: text('type').notNull().default('outbound'),
    body: text('body').notNull(),
    label: text('label').notNull(),
    buildId: text('build_id'),
    deployedAt: now('deployed_at'),
  },
  (t) => [uniqueIndex('profile_prompt_versions_label_uq').on(t.profileId, t.label)],
)

// Live server processes: each upserts its row every few seconds. A call still ringing or in progress whose
// owner stopped beating died with that process (a crash, a SIGKILL); the call sweep reconciles it.
export const instances = pgTable('instances', {
  id: text('id').primaryKey(),
  startedAt: now('started_at'),
  seenAt: now('seen_at'),
})

// Outbound calls (call_<n>). status queued → ringing → in_progress → completed | no_answer | failed |
// canceled. `script` is what the call runs, resolved and filled when it was created (the profile's or the
// inline role's prompt, greeting, voicemail policy, capabilities, time limit), so a later profile change
// does not change a call already placed. A campaign call names its contact and attempt; the unique index
// makes a second dial of the same attempt impossible, whichever instance tries it.
export const callSeq = pgSequence('call_seq', { startWith: 1 })

export const calls = pgTable(
  'calls',
  {
    id: text('id').primaryKey().default(sql`'call_' || nextval('call_seq')`),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    profileId: text('profile_id'),
    campaignId: text('campaign_id'),
    contactItemId: text('contact_item_id'),
    attempt: integer('attempt').notNull().default(1),
    direction: text('direction').notNull().default('outbound'),
    fromE164: text('from_e164'),
    toE164: text('to_e164').notNull(),
    status: text('status').notNull(),
    outcome: text('outcome'),
    conversationId: text('conversation_id'),
    failureReason: text('failure_reason'),
    variables: jsonb('variables').$type<Record<string, string>>().notNull().default({}),
    script: jsonb('script').$type<Record<string, unknown>>().notNull().default({}),
    provider: text('provider').notNull(),
    providerCallId: text('provider_call_id'),
    ownerInstance: text('owner_instance'),
    startedAt: ts('started_at'),
    answeredAt: ts('answered_at'),
    endedAt: ts('ended_at'),
    durationS: integer('duration_s'),
    createdAt: now('created_at'),
    updatedAt: now('updated_at'),
  },
  (t) => [
    index('calls_account_created_idx').on(t.accountId, t.createdAt, t.id),
    index('calls_live_idx')
      .on(t.status, t.accountId, t.createdAt)
      .where(sql`status IN ('queued', 'ringing', 'in_progress')`),
    index('calls_campaign_idx').on(t.campaignId, t.createdAt),
    index('calls_provider_idx').on(t.providerCallId),
    uniqueIndex('calls_contact_attempt_uq')
      .on(t.campaignId, t.contactItemId, t.attempt)
      .where(sql`campaign_id IS NOT NULL`),
  ],
)

// Campaigns (cmp_<n>): an agent's profile dialling a contact list inside a weekly schedule window.
export const campaignSeq = pgSequence('campaign_seq', { startWith: 1 })

export const campaigns = pgTable(
  'campaigns',
  {
    id: text('id').primaryKey().default(sql`'cmp_' || nextval('campaign_seq')`),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    profileId: text('profile_id')
      .notNull()
      .references(() => profiles.id),
    listId: text('list_id')
      .notNull()
      .references(() => contactLists.id),
    name: text('name').notNull(),
    /** draft, running, paused, stopped or completed. */
    status: text('status').notNull().default('draft'),
    schedule: jsonb('schedule').$type<{ timezone: string; days: string[]; start: string; end: string }>().notNull(),
    maxConcurrent: integer('max_concurrent').notNull().default(1),
    maxAttempts: integer('max_attempts').notNull().default(1),
    retryDelayMinutes: doublePrecision('retry_delay_minutes').notNull().default(60),
    /** The telephony provider of the instance that dialled first; only instances on it dial the rest. */
    provider: text('provider'),
    createdAt: now('created_at'),
    updatedAt: now('updated_at'),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    index('campaigns_account_created_idx').on(t.accountId, t.createdAt, t.id),
    index('campaigns_running_idx').on(t.status).where(sql`status = 'running'`),
  ],
)

// One row per contact of a campaign, copied from the list when the campaign first starts (later list
// imports do not join a running campaign). status pending | in_progress | completed | no_answer | failed |
// dnc_skipped; `attempts` counts dials placed; a pending contact is due at next_attempt_at.
export const campaignContacts = pgTable(
  'campaign_contacts',
  {
    campaignId: text('campaign_id')
      .notNull()
      .references(() => campaigns.id, { onDelete: 'cascade' }),
    itemId: text('item_id').notNull(),
    phoneE164: text('phone_e164').notNull(),
    name: text('name'),
    timezone: text('timezone'),
    variables: jsonb('variables').$type<Record<string, string>>().notNull().default({}),
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    lastCallId: text('last_call_id'),
    outcome: text('outcome'),
    nextAttemptAt: ts('next_attempt_at'),
    updatedAt: now('updated_at'),
  },
  (t) => [
    primaryKey({ columns: [t.campaignId, t.itemId] }),
    index('campaign_contacts_due_idx').on(t.campaignId, t.status, t.nextAttemptAt),
  ],
)

// The operator surface (issue 18). Every write of an /admin route, with its request id.
export const adminActionSeq = pgSequence('admin_action_seq', { startWith: 1 })
export const adminActions = pgTable(
  'admin_actions',
  {
    id: text('id').primaryKey().default(sql`'act_' || nextval('admin_action_seq')`),
    action: text('action').notNull(),
    target: text('target'),
    params: jsonb('params').$type<Record<string, unknown>>().notNull().default({}),
    requestId: text('request_id').notNull(),
    createdAt: now('created_at'),
  },
  (t) => [index('admin_actions_created_idx').on(t.createdAt, t.id)],
)

// The wallet as a ledger (issue 18): credits (top-ups), debits (usage charged to the wallet) and
// adjustments are rows; an account's wallet balance is the sum of its entries' amounts. balance_after is
// that sum including the entry, written under the account's subscription row lock.
export const walletEntrySeq = pgSequence('wallet_entry_seq', { startWith: 1 })
export const walletEntries = pgTable(
  'wallet_entries',
  {
    id: text('id').primaryKey().default(sql`'wal_' || nextval('wallet_entry_seq')`),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    amount: numeric('amount', { precision: 12, scale: 4, mode: 'number' }).notNull(),
    currencyCode: text('currency_code').notNull(),
    kind: text('kind').notNull(),
    reason: text('reason').notNull(),
    balanceAfter: numeric('balance_after', { precision: 12, scale: 4, mode: 'number' }).notNull(),
    /** What the entry settles, when it is derived (e.g. usage of a month), for idempotent settlement. */
    source: text('source'),
    requestId: text('request_id'),
    createdAt: now('created_at'),
  },
  (t) => [index('wallet_entries_account_idx').on(t.accountId, t.createdAt, t.id)],
)

// Operator-set platform defaults (issue 18: GET/PATCH /admin/config), read by every instance within 10 s.
export const platformConfig = pgTable('platform_config', {
  key: text('key').primaryKey(),
  value: jsonb('value').notNull(),
  updatedAt: now('updated_at'),
})

// Agent tests (issue 31; decisions "Agent tests"): scripted visitor turns with assertions on the agent's
// answers, at most 100 per agent. turns: [{user, expect: [Assertion]}] (≤ 20); reference_answers: the
// answers of the conversation a test was made from.
export const agentTestSeq = pgSequence('agent_test_seq', { startWith: 1 })
export const agentTests = pgTable(
  'agent_tests',
  {
    id: text('id').primaryKey().default(sql`'tst_' || nextval('agent_test_seq')`),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** chat, phone, voice_chat. */
    surface: text('surface').notNull(),
    turns: jsonb('turns').$type<{ user: string; expect: Record<string, unknown>[] }[]>().notNull(),
    referenceAnswers: jsonb('reference_answers').$type<string[] | null>(),
    createdAt: now('created_at'),
    updatedAt: now('updated_at'),
  },
  (t) => [index('agent_tests_agent_created_idx').on(t.accountId, t.agentId, t.createdAt, t.id)],
)

// Runs of an agent's tests (decisions "Test runs"), executed by the agent_tests.run job. `tests` is the
// tests as they were when the run was asked for (a later edit does not change what a queued run checks);
// results grow as attempts finish.
export const testRunSeq = pgSequence('test_run_seq', { startWith: 1 })
export const testRuns = pgTable(
  'test_runs',
  {
    id: text('id').primaryKey().default(sql`'run_' || nextval('test_run_seq')`),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    /** The label the run talks to (the candidate's, else the agent's current prompt_version). */
    promptVersion: text('prompt_version'),
    /** The candidate prompt version (pv_<n>) whose body replaces its surface's prompt; null: the active prompts. */
    promptVersionId: text('prompt_version_id'),
    tests: jsonb('tests').$type<Record<string, unknown>[]>().notNull(),
    repeat: integer('repeat').notNull(),
    /** queued, running, passed, failed, error. */
    status: text('status').notNull().default('queued'),
    total: integer('total').notNull(),
    passed: integer('passed').notNull().default(0),
    failed: integer('failed').notNull().default(0),
    skipped: integer('skipped').notNull().default(0),
    results: jsonb('results').$type<Record<string, unknown>[]>().notNull().default([]),
    error: text('error'),
    createdAt: now('created_at'),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [index('test_runs_agent_created_idx').on(t.accountId, t.agentId, t.createdAt, t.id)],
)

// One analysis per conversation and analysis version (decisions "Conversation analysis"): the primary key
// is what makes a redelivered job, a race between the end job and a backfill, or a second backfill write
// one row. Values, evidence and success as the API shows them.
export const conversationAnalyses = pgTable(
  'conversation_analyses',
  {
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    analysisVersion: integer('analysis_version').notNull(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    values: jsonb('values').$type<Record<string, unknown>>().notNull(),
    evidence: jsonb('evidence').$type<Record<string, unknown>>().notNull(),
    success: boolean('success'),
    analyzedAt: now('analyzed_at'),
  },
  (t) => [
    primaryKey({ columns: [t.conversationId, t.analysisVersion] }),
    index('conversation_analyses_agent_idx').on(t.agentId, t.analysisVersion),
  ],
)

// Knowledge syncs (decisions "Knowledge sync"): one revisit of an agent's URL-sourced documents, manual or
// scheduled. At most one runs per agent at a time (claimed under the agent's row lock, domain/kb/sync.ts).
export const kbSyncSeq = pgSequence('kb_sync_seq', { startWith: 1 })
export const kbSyncs = pgTable(
  'kb_syncs',
  {
    id: text('id').primaryKey().default(sql`'sync_' || nextval('kb_sync_seq')`),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id, { onDelete: 'cascade' }),
    /** manual or schedule. */
    trigger: text('trigger').notNull(),
    /** running, succeeded or failed. */
    status: text('status').notNull().default('running'),
    pagesChecked: integer('pages_checked').notNull().default(0),
    notModified: integer('not_modified').notNull().default(0),
    unchanged: integer('unchanged').notNull().default(0),
    added: jsonb('added').$type<string[]>().notNull().default([]),
    changed: jsonb('changed').$type<string[]>().notNull().default([]),
    removed: jsonb('removed').$type<string[]>().notNull().default([]),
    summaryRebuild: boolean('summary_rebuild').notNull().default(false),
    error: text('error'),
    /** When a job instance took the sync; a claim older than the stale bound may be taken over. */
    claimedAt: ts('claimed_at'),
    startedAt: now('started_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [index('kb_syncs_agent_started_idx').on(t.accountId, t.agentId, t.startedAt, t.id)],
)
