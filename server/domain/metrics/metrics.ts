// Conversation metrics (issue 6): GET /metrics/conversations (grouped by agent, agent_version or UTC day,
// with deploy markers) and GET /metrics (one overview object). Both read the window [from, to) of
// conversations.started_at, leave soft-deleted conversations out and never look past the accounts the
// request resolved to. Aggregation happens in SQL (percentile_cont for latencies).
import { sql, type SQL } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { rowsOf } from '~/db/client'
import { Errors } from '~/lib/errors'
import type { AccountScope } from '~/domain/accounts/resolve'
import { OUTCOMES, type MetricGroup } from './schemas'
import { voiceSecondsSql } from '~/domain/usage/voice'
import { parseWindow } from '~/lib/window'
import { WIDGET_EVENT_TYPES } from '~/domain/widget/schemas'

export const DEFAULT_WINDOW_DAYS = 30
export const MAX_WINDOW_DAYS = 366
const DAY_MS = 86_400_000

export interface WindowQuery {
  from?: string
  to?: string
  agent_id?: string[]
  channel?: string[]
}
export interface MetricsWindow {
  from: Date
  to: Date
  appliedDefault: boolean
}

/** from and to are both optional: neither gives the last 30 days up to now (applied_default_range);
 *  only from runs to now; only to starts 30 days earlier. The window is [from, to), at most 366 days. */
export function resolveWindow(q: { from?: string; to?: string }, now = new Date()): MetricsWindow {
  const w = parseWindow(q.from, q.to, { defaultMs: DEFAULT_WINDOW_DAYS * DAY_MS, maxDays: MAX_WINDOW_DAYS, now })
  return { from: w.from, to: w.to, appliedDefault: w.defaulted }
}

/** The accounts a metrics read covers: the resolved account_id values, else the X-Svc-Account or home account. */
export function metricsAccounts(account: AccountScope | null): string[] {
  const ids = account?.ids.length ? account.ids : account?.id ? [account.id] : []
  if (!ids.length) throw Errors.forbiddenAccount('Name an account with account_id or X-Svc-Account.')
  return ids
}

const list = (values: readonly string[]) =>
  sql.join(
    values.map((x) => sql`${x}`),
    sql`, `,
  )

/** The conversations counted: the accounts, the window, the filters, never soft-deleted ones nor the calls
 *  of agent test runs. */
function conversationFilter(accountIds: string[], w: MetricsWindow, q: WindowQuery): SQL {
  const conds: SQL[] = [
    sql`c.account_id IN (${list(accountIds)})`,
    sql`c.deleted_at IS NULL`,
    sql`c.test_run_id IS NULL`,
    sql`c.started_at >= ${w.from.toISOString()}`,
    sql`c.started_at < ${w.to.toISOString()}`,
  ]
  if (q.agent_id?.length) conds.push(sql`c.agent_id IN (${list(q.agent_id)})`)
  if (q.channel?.length) conds.push(sql`c.channel IN (${list(q.channel)})`)
  return sql.join(conds, sql` AND `)
}

const GROUP_KEYS: Record<MetricGroup, { name: string; expr: SQL }[]> = {
  agent: [{ name: 'agent_id', expr: sql`c.agent_id` }],
  agent_version: [
    { name: 'agent_id', expr: sql`c.agent_id` },
    { name: 'agent_version', expr: sql`c.agent_version` },
  ],
  day: [{ name: 'day', expr: sql`to_char(c.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')` }],
}

type Row = Record<string, unknown>

/** One row per group of the conversation figures; `keys` empty gives one row for the whole window. */
async function conversationFigures(database: Database, where: SQL, keys: { name: string; expr: SQL }[]) {
  const keyCols = keys.length ? keys.map((k, i) => sql`${k.expr} AS ${sql.identifier(`k${i}`)}`) : [sql`1 AS k0`]
  const keyNames = keys.length ? keys.map((_, i) => `k${i}`) : ['k0']
  const ids = (alias: string) =>
    sql.join(
      keyNames.map((n) => sql`${sql.raw(alias)}.${sql.identifier(n)}`),
      sql`, `,
    )
  const same = (alias: string) =>
    sql.join(
      keyNames.map((n) => sql`b.${sql.identifier(n)} IS NOT DISTINCT FROM ${sql.raw(alias)}.${sql.identifier(n)}`),
      sql` AND `,
    )
  const outcomeCols = OUTCOMES.map(
    (o) => sql`count(*) FILTER (WHERE outcome = ${o})::int AS ${sql.identifier(`o_${o}`)}`,
  )
  const rows = rowsOf<Row>(
    await database.db.execute(sql`
    WITH c AS (
      SELECT c.id, c.account_id, c.session_id, c.status, c.outcome, c.escalated, ${sql.join(keyCols, sql`, `)}
      FROM conversations c WHERE ${where}
    ),
    b AS (
      SELECT ${ids('c')}, count(*)::int AS conversations,
             count(*) FILTER (WHERE status = 'completed')::int AS completed,
             count(*) FILTER (WHERE escalated)::int AS escalated,
             count(*) FILTER (WHERE outcome IS NULL)::int AS without_outcome,
             ${sql.join(outcomeCols, sql`, `)}
      FROM c GROUP BY ${ids('c')}
    ),
    t AS (
      SELECT ${ids('c')}, count(*)::int AS answers, count(*) FILTER (WHERE t.unanswered)::int AS unanswered,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY t.latency_ms)::float8 AS p50,
             percentile_cont(0.9) WITHIN GROUP (ORDER BY t.latency_ms)::float8 AS p90,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY t.latency_ms)::float8 AS p99
      FROM turns t JOIN c ON c.id = t.conversation_id
      WHERE t.speaker = 'agent' AND t.turn_type = 'answer'
      GROUP BY ${ids('c')}
    ),
    u AS (
      SELECT ${ids('c')}, coalesce(sum(u.tokens), 0)::bigint AS tokens
      FROM usage_records u JOIN c ON u.account_id = c.account_id AND u.session_id = c.session_id
      GROUP BY ${ids('c')}
    )
    SELECT b.*, coalesce(t.answers, 0) AS answers, coalesce(t.unanswered, 0) AS unanswered, t.p50, t.p90, t.p99,
           coalesce(u.tokens, 0) AS tokens
    FROM b
    LEFT JOIN t ON ${same('t')}
    LEFT JOIN u ON ${same('u')}
    ORDER BY ${sql.join(
      keyNames.map((n) => sql`b.${sql.identifier(n)} ASC NULLS LAST`),
      sql`, `,
    )}`),
  )
  return rows.map((r) => ({ keys: keyNames.map((n) => r[n]), figures: present(r) }))
}

const round = (n: unknown) => (n === null || n === undefined ? null : Math.round(Number(n) * 100) / 100)

function present(r: Row) {
  const answers = Number(r.answers)
  const unanswered = Number(r.unanswered)
  return {
    conversations: Number(r.conversations),
    completed: Number(r.completed),
    outcomes: Object.fromEntries(OUTCOMES.map((o) => [o, Number(r[`o_${o}`])])) as Record<
      (typeof OUTCOMES)[number],
      number
    >,
    without_outcome: Number(r.without_outcome),
    escalated: Number(r.escalated),
    answers,
    unanswered,
    unanswered_rate: answers ? Math.round((unanswered / answers) * 10_000) / 10_000 : null,
    latency_ms: { p50: round(r.p50), p90: round(r.p90), p99: round(r.p99) },
    tokens: Number(r.tokens),
  }
}

export type ConversationFigures = ReturnType<typeof present>

const EMPTY: ConversationFigures = present({
  conversations: 0,
  completed: 0,
  without_outcome: 0,
  escalated: 0,
  answers: 0,
  unanswered: 0,
  tokens: 0,
  ...Object.fromEntries(OUTCOMES.map((o) => [`o_${o}`, 0])),
})

/** GET /metrics/conversations. */
export async function conversationMetrics(
  database: Database,
  accountIds: string[],
  q: WindowQuery & { group_by: MetricGroup },
) {
  const w = resolveWindow(q)
  const where = conversationFilter(accountIds, w, q)
  const keys = GROUP_KEYS[q.group_by]
  const groups = await conversationFigures(database, where, keys)
  const [total] = await conversationFigures(database, where, [])
  const data = groups.map((g) => ({
    ...Object.fromEntries(keys.map((k, i) => [k.name, g.keys[i] ?? null])),
    ...g.figures,
  }))
  const markers = q.group_by === 'day' ? [] : await deployMarkers(database, accountIds, w, q.agent_id)
  return {
    report: { data, totals: total?.figures ?? EMPTY, markers },
    meta: {
      from: w.from.toISOString(),
      to: w.to.toISOString(),
      applied_default_range: w.appliedDefault,
      group_by: q.group_by,
    },
  }
}

/** Deploy markers (agent_versions rows) of the window, oldest first, for overlaying on a chart. */
async function deployMarkers(database: Database, accountIds: string[], w: MetricsWindow, agentIds?: string[]) {
  const rows = rowsOf<Row>(
    await database.db.execute(sql`
    SELECT agent_id, agent_version, prompt_version, reason, deployed_at
    FROM agent_versions
    WHERE account_id IN (${list(accountIds)}) AND deployed_at >= ${w.from.toISOString()} AND deployed_at < ${w.to.toISOString()}
      ${agentIds?.length ? sql`AND agent_id IN (${list(agentIds)})` : sql``}
    ORDER BY deployed_at ASC, id ASC`),
  )
  return rows.map((r) => ({
    agent_id: String(r.agent_id),
    agent_version: String(r.agent_version),
    prompt_version: (r.prompt_version as string | null) ?? null,
    reason: String(r.reason),
    deployed_at: new Date(r.deployed_at as string).toISOString(),
  }))
}

/** GET /metrics: the conversation figures of the window as one object, plus active agents and the
 *  billed usage (usage_records started in the window, as GET /accounts/{acc}/usage counts it). */
export async function metricsOverview(database: Database, accountIds: string[], q: WindowQuery) {
  const w = resolveWindow(q)
  const where = conversationFilter(accountIds, w, q)
  const [total] = await conversationFigures(database, where, [])
  const [agents] = rowsOf<Row>(
    await database.db.execute(sql`
    SELECT count(DISTINCT c.agent_id)::int AS active_agents FROM conversations c WHERE ${where}`),
  )
  const usageConds: SQL[] = [
    sql`account_id IN (${list(accountIds)})`,
    sql`started_at >= ${w.from.toISOString()}`,
    sql`started_at < ${w.to.toISOString()}`,
  ]
  if (q.agent_id?.length) usageConds.push(sql`agent_id IN (${list(q.agent_id)})`)
  if (q.channel?.length) usageConds.push(sql`channel IN (${list(q.channel)})`)
  const voice = voiceSecondsSql()
  const [usage] = rowsOf<Row>(
    await database.db.execute(sql`
    SELECT count(*)::int AS billed_sessions, coalesce(sum(tokens), 0)::bigint AS tokens,
           coalesce(sum(cost_usd), 0)::float8 AS cost_usd, coalesce(sum(${voice}), 0)::bigint AS voice_seconds
    FROM usage_records WHERE ${sql.join(usageConds, sql` AND `)}`),
  )
  const figures = total?.figures ?? EMPTY
  const widgetEvents = await widgetEventFigures(database, accountIds, w, q)
  return {
    overview: {
      ...figures,
      active_agents: Number(agents?.active_agents ?? 0),
      tokens: Number(usage?.tokens ?? 0),
      cost_usd: Math.round(Number(usage?.cost_usd ?? 0) * 1e6) / 1e6,
      voice_seconds: Number(usage?.voice_seconds ?? 0),
      billed_sessions: Number(usage?.billed_sessions ?? 0),
      widget_events: widgetEvents,
    },
    meta: { from: w.from.toISOString(), to: w.to.toISOString(), applied_default_range: w.appliedDefault },
  }
}

const zeroWidgetCounts = () => Object.fromEntries(WIDGET_EVENT_TYPES.map((t) => [t, 0])) as Record<string, number>

/**
 * Browser-side widget events counted per agent (issue 17), on the UTC days that overlap the window (the
 * counts are kept per day), narrowed by agent_id; a channel filter without `widget` leaves them out.
 * `totals` and one row per agent with any event, by agent id; every type key is always present.
 */
async function widgetEventFigures(database: Database, accountIds: string[], w: MetricsWindow, q: WindowQuery) {
  const totals = zeroWidgetCounts()
  if (q.channel?.length && !q.channel.includes('widget')) return { totals, agents: [] }
  const last = new Date(w.to.getTime() - 1)
  const rows = rowsOf<Row>(
    await database.db.execute(sql`
    SELECT agent_id, type, sum(count)::bigint AS n FROM widget_event_counts
    WHERE account_id IN (${list(accountIds)}) AND day >= ${w.from.toISOString().slice(0, 10)}::date
      AND day <= ${last.toISOString().slice(0, 10)}::date
      ${q.agent_id?.length ? sql`AND agent_id IN (${list(q.agent_id)})` : sql``}
    GROUP BY agent_id, type ORDER BY length(agent_id), agent_id`),
  )
  const agents = new Map<string, Record<string, number>>()
  for (const r of rows) {
    const id = String(r.agent_id)
    const counts = agents.get(id) ?? zeroWidgetCounts()
    counts[String(r.type)] = Number(r.n)
    totals[String(r.type)] = (totals[String(r.type)] ?? 0) + Number(r.n)
    agents.set(id, counts)
  }
  return { totals, agents: [...agents].map(([agent_id, counts]) => ({ agent_id, counts })) }
}
