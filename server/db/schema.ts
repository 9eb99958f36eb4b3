// The one schema for PostgreSQL and PGlite. Ids are `prefix_<n>` minted from sequences in SQL defaults,
// so every writer (any instance, any engine) gets the same shape without application-side counters.
import { sql } from 'drizzle-orm'
import { boolean, index, integer, jsonb, numeric, pgSequence, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'

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
