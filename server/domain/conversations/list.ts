// GET /conversations: filters, the default 30-day window, the backfill rules, include rules and a
// keyset page on (started_at, id) or (updated_at, id). PostgreSQL builds each row's JSON (listItemJson)
// and the route splices the strings into the envelope; the JS mapping path stays for the bench
// (SVC_BENCH_LIST_JSON=js) and as the reference the tests compare against. The summary and identity of
// an account with default_redaction are masked after the query (the list takes no redact query; the
// masking rules are not SQL), so only pages that carry them for such an account pay for it.
import { and, asc, desc, eq, gte, inArray, isNull, lt, or, sql, type SQL } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { rowsOf } from '~/db/client'
import { conversations } from '~/db/schema'
import { Errors, apiError } from '~/lib/errors'
import type { KeysetRequest } from '~/lib/keyset'
import { encodeCursor } from '~/lib/cursor'
import type { Principal } from '~/domain/credentials/principal'
import { defaultRedaction } from '~/domain/accounts/accounts'
import { listItemJson, presentListItem, redactReadable, type ConversationRow } from './present'
import { LIST_INCLUDES, type ListQuery, type Sort } from './schemas'
import { requireOrder } from '~/lib/window'

export const DEFAULT_WINDOW_MS = 30 * 86_400_000
export const BACKFILL_LIMIT = 200

/** Parses an include CSV against the allowed names; `transcript` on the list and unknown names are 400 unsupported_filter. */
export function parseInclude(
  raw: string | undefined,
  allowed: readonly string[],
  fallback: readonly string[],
): Set<string> {
  if (raw === undefined) return new Set(fallback)
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  for (const n of names) {
    if (!allowed.includes(n))
      throw apiError(
        'unsupported_filter',
        n === 'transcript'
          ? 'transcript is detail-only: read GET /conversations/{conv}.'
          : `Unknown include "${n}"; expected ${allowed.join(', ')}.`,
        'include',
      )
  }
  return new Set(names)
}

const hasScope = (p: Principal, s: string) => p.type === 'master' || p.scopes.has(s as any)

/** Rule 4: a key with summaries:read but not conversations:read may only ask for include=summary. */
export function checkSummariesOnly(principal: Principal, include: ReadonlySet<string>) {
  if (hasScope(principal, 'conversations:read')) return
  if ([...include].some((i) => i !== 'summary') || include.size === 0) {
    throw apiError(
      'insufficient_scope',
      'A key with only summaries:read may list conversations with include=summary only.',
      'include',
    )
  }
}

export interface ListWindow {
  from: Date | null
  to: Date | null
  defaulted: boolean
}

/** Rule 1 and the from/to checks: no from, to or updated_since → the last 30 days, echoed in meta. */
export function listWindow(q: Pick<ListQuery, 'from' | 'to' | 'updated_since'>, now = new Date()): ListWindow {
  if (!q.from && !q.to && !q.updated_since)
    return { from: new Date(now.getTime() - DEFAULT_WINDOW_MS), to: now, defaulted: true }
  const from = q.from ? new Date(q.from) : null
  const to = q.to ? new Date(q.to) : null
  requireOrder(from, to)
  return { from, to, defaulted: false }
}

type BackfillQuery = { from?: unknown; to?: unknown; updated_since?: unknown; limit?: unknown }

/**
 * Rule 2: deep history or a large page needs conversations:backfill (and is metered in that class).
 * Answers the parameter that makes the read deep, or null. A `to` without `from` leaves started_at open
 * below, which reaches the oldest history like a from older than 30 days, so it counts as deep history too
 * (updated_since is left alone: the contract opens the started_at window fully for it, bounded by change time).
 * Reads the raw query as well (the rate class is picked before validation): anything not a string is ignored.
 */
export function backfillReason(q: BackfillQuery, now = new Date()): 'limit' | 'from' | 'to' | null {
  const limit = Number(q.limit ?? 50)
  if (Number.isFinite(limit) && limit > BACKFILL_LIMIT) return 'limit'
  const has = (x: unknown) => typeof x === 'string' && x !== ''
  if (has(q.from)) {
    const t = Date.parse(q.from as string)
    return Number.isFinite(t) && t < now.getTime() - DEFAULT_WINDOW_MS ? 'from' : null
  }
  if (has(q.to) && !has(q.updated_since)) return 'to'
  return null
}

export const needsBackfill = (q: BackfillQuery, now = new Date()): boolean => backfillReason(q, now) !== null

export function checkBackfill(
  principal: Principal,
  q: Pick<ListQuery, 'from' | 'to' | 'updated_since' | 'limit'>,
  now = new Date(),
) {
  const reason = backfillReason(q, now)
  if (reason && !hasScope(principal, 'conversations:backfill')) {
    throw apiError(
      'insufficient_scope',
      'A from older than 30 days, a to without from or a limit above 200 needs the scope conversations:backfill.',
      reason,
    )
  }
}

export interface ListFilters {
  accountIds: string[]
  window: ListWindow
  q: ListQuery
}

const c = conversations

function whereOf(f: ListFilters): SQL {
  const q = f.q
  const conds: (SQL | undefined)[] = [
    f.accountIds.length === 1 ? eq(c.accountId, f.accountIds[0]) : inArray(c.accountId, f.accountIds),
    isNull(c.deletedAt),
    // The phone calls of an agent test run live only while their test is read (decisions "Test runs").
    isNull(c.testRunId),
  ]
  if (f.window.from) conds.push(gte(c.startedAt, f.window.from))
  if (f.window.to) conds.push(lt(c.startedAt, f.window.to))
  if (q.updated_since) conds.push(sql`${c.updatedAt} > ${new Date(q.updated_since).toISOString()}::timestamptz`)
  if (q.agent_id?.length) conds.push(inArray(c.agentId, q.agent_id))
  if (q.agent_type?.length) conds.push(inArray(c.agentType, q.agent_type))
  if (q.channel?.length) conds.push(inArray(c.channel, q.channel))
  if (q.status?.length) conds.push(inArray(c.status, q.status))
  if (q.outcome?.length) conds.push(inArray(c.outcome, q.outcome))
  if (q.language?.length) {
    conds.push(
      or(
        ...q.language.map(
          (l) =>
            sql`(lower(${c.language}) = ${l.toLowerCase()} OR lower(${c.language}) LIKE ${l.toLowerCase() + '-%'})`,
        ),
      ),
    )
  }
  // Literals, not parameters: a generic plan can then use the partial `WHERE escalated` / `WHERE has_recording` indexes.
  if (q.escalated !== undefined) conds.push(q.escalated ? sql`${c.escalated}` : sql`NOT ${c.escalated}`)
  if (q.has_identity !== undefined) conds.push(q.has_identity ? sql`${c.hasIdentity}` : sql`NOT ${c.hasIdentity}`)
  if (q.has_recording !== undefined) conds.push(q.has_recording ? sql`${c.hasRecording}` : sql`NOT ${c.hasRecording}`)
  if (q.external_session_id !== undefined) conds.push(eq(c.externalSessionId, q.external_session_id))
  return and(...conds)!
}

function sortParts(sort: Sort) {
  const column = sort.endsWith('updated_at') ? c.updatedAt : c.startedAt
  const descending = sort.startsWith('-')
  return { column, descending }
}

/** The keyset position as a row comparison, so PostgreSQL walks the (account_id, key, id) index from it. */
function afterOf(sort: Sort, after: unknown[] | null): SQL | undefined {
  if (!after) return undefined
  const [at, id] = after as [string, string]
  if (typeof at !== 'string' || typeof id !== 'string' || Number.isNaN(Date.parse(at))) throw Errors.invalidCursor()
  const { column, descending } = sortParts(sort)
  return descending
    ? sql`(${column}, ${c.id}) < (${at}::timestamptz, ${id})`
    : sql`(${column}, ${c.id}) > (${at}::timestamptz, ${id})`
}

function orderOf(sort: Sort): SQL[] {
  const { column, descending } = sortParts(sort)
  // Always the table columns themselves, never an output alias (perf-baselines: an aliased cast column
  // in ORDER BY loses the index order).
  return descending ? [desc(column), desc(c.id)] : [asc(column), asc(c.id)]
}

export interface PageWindow {
  from: string | null
  to: string | null
}

/** The window of the first page travels in the cursor, so a defaulted (sliding) window stays fixed while paging. */
function windowFrom(page: KeysetRequest, q: ListQuery): { window: ListWindow; after: unknown[] | null } {
  if (!page.after) return { window: listWindow(q), after: null }
  const [at, id, from, to, defaulted] = page.after as [string, string, string | null, string | null, boolean]
  return {
    window: { from: from ? new Date(from) : null, to: to ? new Date(to) : null, defaulted: !!defaulted },
    after: [at, id],
  }
}

function metaOf(w: ListWindow) {
  return { applied_default_range: w.defaulted, from: w.from?.toISOString() ?? null, to: w.to?.toISOString() ?? null }
}

async function nextCursor(page: KeysetRequest, w: ListWindow, at: string, id: string) {
  return encodeCursor(
    [at, id, w.from?.toISOString() ?? null, w.to?.toISOString() ?? null, w.defaulted],
    page.binding,
    page.secret,
  )
}

/**
 * The accounts of a page whose rows are masked: those with default_redaction, among the accounts the page
 * holds, when the page carries a summary, identity or analysis at all (metrics hold no PII: nothing to mask).
 */
async function maskedAccounts(
  database: Database,
  include: ReadonlySet<string>,
  accountIds: Iterable<string>,
): Promise<ReadonlySet<string>> {
  if (!include.has('summary') && !include.has('identity') && !include.has('analysis')) return new Set()
  const ids = [...new Set(accountIds)]
  const on = await Promise.all(ids.map((id) => defaultRedaction(database, id)))
  return new Set(ids.filter((_, i) => on[i]))
}

export interface JsonPage {
  /** The data array as JSON text, built by PostgreSQL. */
  dataJson: string
  limit: number
  hasMore: boolean
  nextCursor: string | null
  meta: Record<string, unknown>
}

/** One page with each row's JSON built by PostgreSQL (json_build_object); node only joins the strings. */
export async function listConversationsJson(
  database: Database,
  accountIds: string[],
  q: ListQuery,
  include: ReadonlySet<string>,
  page: KeysetRequest,
): Promise<JsonPage> {
  const { window, after } = windowFrom(page, q)
  const limit = page.binding.limit
  const { column } = sortParts(q.sort)
  const where = and(whereOf({ accountIds, window, q }), afterOf(q.sort, after))
  const result = await database.db.execute(sql`
    SELECT ${listItemJson(include)}::text AS j, ${c.id} AS pos_id, ${c.accountId} AS acc,
           to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS pos_at
    FROM ${c} WHERE ${where}
    ORDER BY ${sql.join(orderOf(q.sort), sql`, `)}
    LIMIT ${limit + 1}`)
  const rows = rowsOf<{ j: string; pos_id: string; acc: string; pos_at: string }>(result)
  const hasMore = rows.length > limit
  const pageRows = rows.slice(0, limit)
  const last = pageRows.at(-1)
  const masked = await maskedAccounts(
    database,
    include,
    pageRows.map((r) => r.acc),
  )
  // Only a masked account's rows are parsed again; every other row stays PostgreSQL's text.
  const json = (r: (typeof pageRows)[number]) =>
    masked.has(r.acc) ? JSON.stringify(redactReadable(JSON.parse(r.j) as Record<string, unknown>)) : r.j
  return {
    dataJson: `[${pageRows.map(json).join(',')}]`,
    limit,
    hasMore,
    nextCursor: hasMore && last ? await nextCursor(page, window, last.pos_at, last.pos_id) : null,
    meta: metaOf(window),
  }
}

/** The same page mapped in JavaScript (presentListItem); the reference for listConversationsJson. */
export async function listConversationsJs(
  database: Database,
  accountIds: string[],
  q: ListQuery,
  include: ReadonlySet<string>,
  page: KeysetRequest,
): Promise<JsonPage> {
  const { window, after } = windowFrom(page, q)
  const limit = page.binding.limit
  const { column } = sortParts(q.sort)
  const rows: ConversationRow[] = await database.db
    .select()
    .from(c)
    .where(and(whereOf({ accountIds, window, q }), afterOf(q.sort, after)))
    .orderBy(...orderOf(q.sort))
    .limit(limit + 1)
  const hasMore = rows.length > limit
  const pageRows = rows.slice(0, limit)
  const last = pageRows.at(-1)
  const key = column === c.updatedAt ? 'updatedAt' : 'startedAt'
  const masked = await maskedAccounts(
    database,
    include,
    pageRows.map((r) => r.accountId),
  )
  const item = (r: ConversationRow) => {
    const out = presentListItem(r, include)
    return masked.has(r.accountId) ? redactReadable(out) : out
  }
  return {
    dataJson: JSON.stringify(pageRows.map(item)),
    limit,
    hasMore,
    nextCursor: hasMore && last ? await nextCursor(page, window, last[key].toISOString(), last.id) : null,
    meta: metaOf(window),
  }
}

export const LIST_DEFAULT_INCLUDE = ['summary', 'identity'] as const
export { LIST_INCLUDES }
