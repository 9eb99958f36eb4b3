// How a conversation looks on the wire: the list object, the detail object (list object plus transcript,
// custom, redacted, redaction_rules_applied), the summary object, turns and tombstones.
// The list object also exists as SQL (listItemJson) so PostgreSQL can build the page JSON itself; the two
// must stay field-for-field identical (test/v1/conversations-read.test.ts compares them through the API).
import { sql, type SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import { LIST_INCLUDES } from './schemas'
import { conversations, type turns } from '~/db/schema'
import { redactText, redactValue, rulesList, type RedactionRule } from './redact'

export type ConversationRow = typeof conversations.$inferSelect
export type TurnRow = typeof turns.$inferSelect

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null)

export function durationOf(row: Pick<ConversationRow, 'metrics' | 'startedAt' | 'endedAt'>): number | null {
  const m = row.metrics?.duration_s
  if (typeof m === 'number') return m
  return row.endedAt ? Math.round((row.endedAt.getTime() - row.startedAt.getTime()) / 1000) : null
}

/** The summary object of decisions "Summary object", or null while summary_status is pending. */
export function presentSummaryObject(summary: Record<string, unknown> | null): Record<string, unknown> | null {
  return summary ?? null
}

/**
 * The identity keys the contract documents: always present, null when unknown ("every documented key is
 * always present"), with the stored keys beside and over them.
 */
export const IDENTITY_KEYS = ['email', 'phone_e164', 'partner_agent_id', 'email_source'] as const
const NO_IDENTITY: Readonly<Record<string, null>> = Object.fromEntries(IDENTITY_KEYS.map((k) => [k, null]))

export function presentIdentity(identity: Record<string, unknown> | null): Record<string, unknown> {
  return { ...NO_IDENTITY, ...identity }
}

/** decisions "utm": the five keys, always an object. */
export const UTM_KEYS = ['source', 'medium', 'campaign', 'term', 'content'] as const
const NO_UTM: Readonly<Record<string, null>> = Object.fromEntries(UTM_KEYS.map((k) => [k, null]))
export const presentUtm = (utm: Record<string, unknown> | null) => ({ ...NO_UTM, ...utm })

/** The list object (GET /conversations); `include` adds summary, identity and metrics. */
export function presentListItem(row: ConversationRow, include: ReadonlySet<string>) {
  const out: Record<string, unknown> = {
    conversation_id: row.id,
    account_id: row.accountId,
    agent_id: row.agentId,
    agent_type: row.agentType,
    status: row.status,
    session_id: row.sessionId,
    external_session_id: row.externalSessionId,
    agent_version: row.agentVersion,
    prompt_version: row.promptVersion,
    model: row.model,
    channel_detail: { channel: row.channel },
    started_at: iso(row.startedAt),
    ended_at: iso(row.endedAt),
    updated_at: iso(row.updatedAt),
    duration_s: durationOf(row),
    language: row.language,
    outcome: row.outcome,
    escalated: row.escalated,
    has_identity: row.hasIdentity,
    has_recording: row.hasRecording,
    turn_count: row.turnCount,
    country: row.country,
    ip_country_only: row.country === null,
    utm: presentUtm(row.utm),
    summary_status: row.summaryStatus,
  }
  if (include.has('summary')) out.summary = presentSummaryObject(row.summary)
  if (include.has('identity')) out.identity = presentIdentity(row.identity)
  if (include.has('metrics')) out.metrics = row.metrics
  if (include.has('analysis')) out.analysis = row.analysis ?? null
  return out
}

const NO_UTM_SQL = sql.raw(`jsonb_build_object(${UTM_KEYS.map((k) => `'${k}', null`).join(', ')})`)
const NO_IDENTITY_SQL = sql.raw(`jsonb_build_object(${IDENTITY_KEYS.map((k) => `'${k}', null`).join(', ')})`)
const isoSql = (col: SQL | unknown) => sql`to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/** presentListItem as one json_build_object over the conversations row (same keys, same order). */
export function listItemJson(include: ReadonlySet<string>): SQL {
  // Rendering this template is a third of a list request's Node CPU (drizzle walks every chunk): it has no
  // parameters, so each include set is rendered once and reused as text.
  const key = LIST_INCLUDES.filter((i) => include.has(i)).join(',')
  let text = listItemTexts.get(key)
  if (text === undefined) {
    const query = listDialect.sqlToQuery(buildListItemJson(include))
    if (query.params.length) return buildListItemJson(include)
    text = query.sql
    listItemTexts.set(key, text)
  }
  return sql.raw(text)
}
const listItemTexts = new Map<string, string>()
const listDialect = new PgDialect()

function buildListItemJson(include: ReadonlySet<string>): SQL {
  const c = conversations
  const parts: SQL[] = [
    sql`'conversation_id', ${c.id}`,
    sql`'account_id', ${c.accountId}`,
    sql`'agent_id', ${c.agentId}`,
    sql`'agent_type', ${c.agentType}`,
    sql`'status', ${c.status}`,
    sql`'session_id', ${c.sessionId}`,
    sql`'external_session_id', ${c.externalSessionId}`,
    sql`'agent_version', ${c.agentVersion}`,
    sql`'prompt_version', ${c.promptVersion}`,
    sql`'model', ${c.model}`,
    sql`'channel_detail', json_build_object('channel', ${c.channel})`,
    sql`'started_at', ${isoSql(c.startedAt)}`,
    sql`'ended_at', ${isoSql(c.endedAt)}`,
    sql`'updated_at', ${isoSql(c.updatedAt)}`,
    sql`'duration_s', coalesce(case when jsonb_typeof(${c.metrics}->'duration_s') = 'number' then (${c.metrics}->'duration_s')::numeric end, round(extract(epoch from (${c.endedAt} - ${c.startedAt})))::int)`,
    sql`'language', ${c.language}`,
    sql`'outcome', ${c.outcome}`,
    sql`'escalated', ${c.escalated}`,
    sql`'has_identity', ${c.hasIdentity}`,
    sql`'has_recording', ${c.hasRecording}`,
    sql`'turn_count', ${c.turnCount}`,
    sql`'country', ${c.country}`,
    sql`'ip_country_only', ${c.country} IS NULL`,
    sql`'utm', ${NO_UTM_SQL} || coalesce(${c.utm}, '{}'::jsonb)`,
    sql`'summary_status', ${c.summaryStatus}`,
  ]
  if (include.has('summary')) parts.push(sql`'summary', ${c.summary}`)
  // The documented keys as nulls under the stored ones: presentIdentity in SQL.
  if (include.has('identity')) parts.push(sql`'identity', ${NO_IDENTITY_SQL} || coalesce(${c.identity}, '{}'::jsonb)`)
  if (include.has('metrics')) parts.push(sql`'metrics', ${c.metrics}`)
  if (include.has('analysis')) parts.push(sql`'analysis', ${c.analysis}`)
  return sql`json_build_object(${sql.join(parts, sql`, `)})`
}

export function presentTurn(t: TurnRow) {
  return {
    turn_index: t.turnIndex,
    speaker: t.speaker,
    text: t.text,
    timestamp: t.timestamp.toISOString(),
    confidence: null,
    audio_offset_ms: t.audioOffsetMs,
    audio_duration_ms: t.audioDurationMs,
    latency_ms: t.latencyMs,
    latency_breakdown: t.latencyBreakdown ?? null,
    turn_type: t.turnType,
    detected_intent: t.detectedIntent,
    detected_language: t.detectedLanguage,
    sources: null,
    unanswered: t.unanswered,
    human_agent_id: t.humanAgentId,
    // Tool turns also carry the call and its result (additive to the contract's Turn fields).
    ...(t.tool ? { tool: t.tool } : {}),
  }
}
export type TurnOut = ReturnType<typeof presentTurn>

/** transcript_format=text: one "speaker: text" line per turn. */
export const transcriptText = (ts: Pick<TurnOut, 'speaker' | 'text'>[]) =>
  ts.map((t) => `${t.speaker}: ${t.text}`).join('\n')

/**
 * The detail object (GET /conversations/{conv}). With redact, turn texts, transcript_text, the summary
 * and the identity values are masked and redaction_rules_applied names the rules that matched.
 */
export function presentDetail(
  row: ConversationRow,
  turnRows: TurnRow[],
  opts: { include: ReadonlySet<string>; format: 'turns' | 'text'; redact: boolean },
) {
  const out = presentListItem(row, opts.include)
  const rules = new Set<RedactionRule>()
  let transcript: TurnOut[] | undefined
  if (opts.include.has('transcript')) {
    transcript = turnRows.map(presentTurn)
    if (opts.redact) transcript = transcript.map((t) => ({ ...t, text: redactText(t.text, rules).text }))
    out.transcript = transcript
    if (opts.format === 'text') out.transcript_text = transcriptText(transcript)
  }
  // The client's own metadata from POST /conversations: detail-only, so a write is readable back.
  out.custom = row.custom
  if (opts.redact) {
    redactReadable(out, rules)
    out.custom = redactValue(out.custom, rules)
  }
  out.redacted = opts.redact
  out.redaction_rules_applied = rulesList(rules)
  return out
}

/**
 * Masks the summary and identity that a presented conversation (list item, detail, summary answer)
 * carries, in place; `rules` collects the rules that matched. The one redaction of every conversation read.
 */
export function redactReadable<T extends Record<string, unknown>>(out: T, rules = new Set<RedactionRule>()): T {
  const o = out as Record<string, unknown>
  if ('summary' in o) o.summary = redactValue(o.summary, rules)
  if ('identity' in o) o.identity = redactValue(o.identity, rules)
  // Analysis values are the visitor's words: masked like the transcript they were taken from (evidence
  // offsets stay valid, a mask keeps the length).
  if (o.analysis) o.analysis = presentAnalysis(o.analysis, true, rules)
  return out
}

/** An analysis as a read shows it: with `redact`, its values masked as transcript text is. */
export function presentAnalysis<T>(doc: T, redact: boolean, rules = new Set<RedactionRule>()): T {
  if (!doc || !redact) return doc
  const a = doc as Record<string, unknown>
  return { ...a, values: redactValue(a.values, rules) } as T
}

/** GET /conversations/{conv}/summary. */
export function presentSummary(row: ConversationRow) {
  return { conversation_id: row.id, summary_status: row.summaryStatus, summary: presentSummaryObject(row.summary) }
}

export function presentTombstone(row: Pick<ConversationRow, 'id' | 'accountId' | 'deletedAt' | 'deleteReason'>) {
  return {
    conversation_id: row.id,
    account_id: row.accountId,
    deleted_at: iso(row.deletedAt)!,
    reason: row.deleteReason ?? 'api',
  }
}
