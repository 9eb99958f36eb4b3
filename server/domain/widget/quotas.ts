// The widget's daily caps per agent (decisions "Widget abuse"): the Origin check is a browser control, not
// authentication (any script can send any Origin), so what a stranger can spend through an agent's public
// token is bounded per agent and UTC day: new widget conversations (widget_conversations_per_day, default
// 2,000) and voice-chat minutes (voice_chat_minutes_per_day, default 600), both operator figures of
// GET/PATCH /admin/config. They are counted in quota_usage beside the account's quotas, under a kind that
// names the agent (no migration; quotaUsed lists only the account's own kinds). Voice minutes are
// reserved when a chat opens (at most the chat's ceiling) and what was not used is given back when it
// ends, so concurrent chats can never spend more than the day's figure together.
import { sql } from 'drizzle-orm'
import { rowsOf, type Executor } from '~/db/client'
import type { AgentRow } from '~/domain/agents/agents'
import { nextUtcMidnight, utcDay } from '~/domain/limits/quotas'
import type { Runtime } from '~/kit/runtime'
import { apiError } from '~/lib/errors'

const conversationsKind = (agentId: string) => `widget_conversations:${agentId}`
const voiceKind = (agentId: string) => `voice_chat_seconds:${agentId}`

/** 429 quota_exceeded with Retry-After until 00:00 UTC. */
function dailyCapReached(what: string, limit: number, now: Date) {
  const resetsAt = nextUtcMidnight(now)
  return apiError(
    'quota_exceeded',
    `This agent's daily ${what} (${limit}) is used up; it resets at ${resetsAt.toISOString()}.`,
    null,
    { 'Retry-After': String(Math.max(1, Math.ceil((resetsAt.getTime() - now.getTime()) / 1000))) },
  )
}

/** Takes one of today's widget conversations of the agent (one atomic upsert), else 429 quota_exceeded. */
export async function takeWidgetConversation(runtime: Runtime, agent: AgentRow, now = new Date()) {
  const limit = runtime.config.widgetConversationsPerDay
  const rows = rowsOf<{ used: number }>(
    await runtime.database.db.execute(sql`
    INSERT INTO quota_usage (account_id, day, kind, used)
      SELECT ${agent.accountId}, ${utcDay(now)}, ${conversationsKind(agent.id)}, 1 WHERE 1 <= ${limit}
    ON CONFLICT (account_id, day, kind) DO UPDATE SET used = quota_usage.used + 1
    WHERE quota_usage.used + 1 <= ${limit}
    RETURNING used`),
  )
  if (!rows.length) throw dailyCapReached('widget_conversations_per_day', limit, now)
  return { day: utcDay(now) }
}

/** Gives back a widget conversation taken for a creation that then failed (402, a paused agent). */
export async function refundWidgetConversation(runtime: Runtime, agent: AgentRow, day: string) {
  await runtime.database.db.execute(sql`UPDATE quota_usage SET used = greatest(used - 1, 0)
    WHERE account_id = ${agent.accountId} AND day = ${day} AND kind = ${conversationsKind(agent.id)}`)
}

const voiceLimitSeconds = (runtime: Runtime) => runtime.config.voiceChatMinutesPerDay * 60

/** 429 quota_exceeded when the agent has no voice-chat seconds left today (a read: the upgrade's early refusal). */
export async function assertVoiceMinutesLeft(runtime: Runtime, agent: AgentRow, now = new Date()) {
  const limit = voiceLimitSeconds(runtime)
  const [row] = rowsOf<{ used: number }>(
    await runtime.database.db.execute(sql`SELECT used FROM quota_usage
      WHERE account_id = ${agent.accountId} AND day = ${utcDay(now)} AND kind = ${voiceKind(agent.id)}`),
  )
  if (Number(row?.used ?? 0) >= limit)
    throw dailyCapReached('voice_chat_minutes_per_day', runtime.config.voiceChatMinutesPerDay, now)
}

/** A reservation of voice-chat seconds: what the chat may last, and where to give back the rest. */
export interface VoiceReservation {
  accountId: string
  agentId: string
  day: string
  seconds: number
}

/**
 * Reserves up to `wantS` seconds of today's voice-chat minutes of the agent inside the caller's transaction
 * (the row is locked, so two chats never share the last seconds); 429 quota_exceeded when none is left.
 */
export async function reserveVoiceSeconds(
  tx: Executor,
  runtime: Runtime,
  agent: AgentRow,
  wantS: number,
  now = new Date(),
): Promise<VoiceReservation> {
  const limit = voiceLimitSeconds(runtime)
  const day = utcDay(now)
  const kind = voiceKind(agent.id)
  await tx.execute(sql`INSERT INTO quota_usage (account_id, day, kind, used)
    VALUES (${agent.accountId}, ${day}, ${kind}, 0) ON CONFLICT (account_id, day, kind) DO NOTHING`)
  const [row] = rowsOf<{ used: number }>(
    await tx.execute(sql`SELECT used FROM quota_usage
      WHERE account_id = ${agent.accountId} AND day = ${day} AND kind = ${kind} FOR UPDATE`),
  )
  const seconds = Math.min(Math.floor(wantS), limit - Number(row?.used ?? 0))
  if (seconds < 1) throw dailyCapReached('voice_chat_minutes_per_day', runtime.config.voiceChatMinutesPerDay, now)
  await tx.execute(sql`UPDATE quota_usage SET used = used + ${seconds}
    WHERE account_id = ${agent.accountId} AND day = ${day} AND kind = ${kind}`)
  return { accountId: agent.accountId, agentId: agent.id, day, seconds }
}

/** The chat has ended after `usedS` seconds (wall clock): the unused part of its reservation is given back. */
export async function settleVoiceSeconds(runtime: Runtime, r: VoiceReservation, usedS: number) {
  const unused = r.seconds - Math.min(r.seconds, Math.ceil(usedS))
  if (unused <= 0) return
  await runtime.database.db.execute(sql`UPDATE quota_usage SET used = greatest(used - ${unused}, 0)
    WHERE account_id = ${r.accountId} AND day = ${r.day} AND kind = ${voiceKind(r.agentId)}`)
}
