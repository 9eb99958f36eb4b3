// The one schema for PostgreSQL and PGlite. Ids are `prefix_<n>` minted from sequences in SQL defaults,
// so every writer (any instance, any engine) gets the same shape without application-side counters.
import { sql } from 'drizzle-orm'
import { bigint, boolean, date, index, integer, jsonb, numeric, pgSequence, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 })
const now = (name: string) => ts(name).notNull().defaultNow()

// A user id and its account id share the number (usr_7 ↔ acc_7), so one sequence mints both.
export const tenantSeq = pgSequence('tenant_seq', { startWith: 1 })

export const accounts = pgTable('accounts', {
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
}, (t) => [index('accounts_created_idx').on(t.createdAt, t.id)])

export const users = pgTable('users', {
  id: text('id').primaryKey(),
  accountId: text('account_id').notNull().references(() => accounts.id),
  email: text('email').notNull(),
  name: text('name'),
  companyName: text('company_name'),
  language: text('language'),
  timezone: text('timezone'),
  currencyCode: text('currency_code').notNull().default('USD'),
  externalIds: jsonb('external_ids').$type<Record<string, string>>().notNull().default({}),
  passwordHash: text('password_hash').notNull(),
  passwordGenerated: boolean('password_generated').notNull().default(false),
  status: text('status').notNull().default('active'),
  limits: jsonb('limits').$type<Record<string, number>>().notNull().default({}),
  createdAt: now('created_at'),
  updatedAt: now('updated_at'),
}, (t) => [
  uniqueIndex('users_email_uq').on(sql`lower(${t.email})`),
  index('users_created_idx').on(t.createdAt, t.id),
])

export const subscriptions = pgTable('subscriptions', {
  accountId: text('account_id').primaryKey().references(() => accounts.id),
  plan: text('plan').notNull(),
  status: text('status').notNull().default('active'),
  planLimit: numeric('plan_limit', { precision: 12, scale: 2, mode: 'number' }).notNull().default(0),
  walletBalance: numeric('wallet_balance', { precision: 12, scale: 4, mode: 'number' }).notNull().default(0),
  createdAt: now('created_at'),
  updatedAt: now('updated_at'),
})

// Idempotency-Key header (decisions): keyed by credential, method and path; 24 h.
export const idempotencyKeys = pgTable('idempotency_keys', {
  credentialId: text('credential_id').notNull(),
  method: text('method').notNull(),
  path: text('path').notNull(),
  key: text('key').notNull(),
  bodyHash: text('body_hash').notNull(),
  state: text('state').notNull().default('running'),
  statusCode: integer('status_code'),
  response: jsonb('response'),
  createdAt: now('created_at'),
}, (t) => [uniqueIndex('idempotency_keys_pk').on(t.credentialId, t.method, t.path, t.key), index('idempotency_keys_created_idx').on(t.createdAt)])

export const apiKeySeq = pgSequence('api_key_seq', { startWith: 1 })

// Personal keys. Only the SHA-256 of the secret is stored; key_prefix (24 characters) identifies it in lists.
export const apiKeys = pgTable('api_keys', {
  id: text('id').primaryKey().default(sql`'key_' || nextval('api_key_seq')`),
  userId: text('user_id').notNull().references(() => users.id),
  accountId: text('account_id').notNull().references(() => accounts.id),
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
}, (t) => [
  uniqueIndex('api_keys_hash_uq').on(t.keyHash),
  index('api_keys_user_idx').on(t.userId, t.createdAt, t.id),
  index('api_keys_created_idx').on(t.createdAt, t.id),
])

// One row per metered request. Keyset on (created_at, id); retained 12 months by a sweep.
export const auditLog = pgTable('audit_log', {
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
}, (t) => [
  index('audit_created_idx').on(t.createdAt, t.id),
  index('audit_credential_idx').on(t.credentialId, t.createdAt),
])

// Dashboard sessions and one-time login links; only hashes of their tokens are stored.
export const sessions = pgTable('sessions', {
  tokenHash: text('token_hash').primaryKey(),
  userId: text('user_id').notNull().references(() => users.id),
  createdAt: now('created_at'),
  expiresAt: ts('expires_at').notNull(),
  revokedAt: ts('revoked_at'),
})

export const loginLinks = pgTable('login_links', {
  tokenHash: text('token_hash').primaryKey(),
  userId: text('user_id').notNull().references(() => users.id),
  createdAt: now('created_at'),
  expiresAt: ts('expires_at').notNull(),
  usedAt: ts('used_at'),
})

// Daily quota counters (reset 00:00 UTC by keying on the UTC day).
export const quotaUsage = pgTable('quota_usage', {
  accountId: text('account_id').notNull(),
  day: date('day', { mode: 'string' }).notNull(),
  kind: text('kind').notNull(),
  used: integer('used').notNull().default(0),
}, (t) => [primaryKey({ columns: [t.accountId, t.day, t.kind] })])

// Billed usage, one row per billed session (written by conversations and calls).
export const usageRecords = pgTable('usage_records', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  accountId: text('account_id').notNull().references(() => accounts.id),
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
}, (t) => [
  index('usage_account_started_idx').on(t.accountId, t.startedAt),
  uniqueIndex('usage_session_uq').on(t.accountId, t.sessionId),
])
