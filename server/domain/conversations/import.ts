// POST /conversations/import: a call handled by an external voice stack, with its summary. It becomes a
// completed conv_u conversation on channel import (summary ready, metrics.direction inbound or outbound)
// stamped with the agent's version, the label of its active phone prompt and its model at import time, and
// feeds the inbound phone history block (recentCallsFor) by its number and direction.
import { and, desc, eq, gte, inArray, isNull, lte, ne, sql } from 'drizzle-orm'
import { ulid } from 'ulid'
import type { Database, Executor } from '~/db/client'
import { conversations, turns } from '~/db/schema'
import { Errors } from '~/lib/errors'
import type { Runtime } from '~/kit/runtime'
import { activePromptLabel, agentVersionOf, loadAgent, resolveModel } from '~/domain/agents/agents'
import { emitEvent } from '~/domain/events/emit'
import { conversationResource } from './read'
import type { ImportBody } from './schemas'

/** Session ids of imported calls start with imp_ (API chats: api_). */
export const IMPORT_SESSION_PREFIX = 'imp_'
/** The channel of every imported conversation, whichever way the call went. */
export const IMPORT_CHANNEL = 'import'
const TURN_TYPE = { agent: 'answer', visitor: 'message', human_agent: 'answer' } as const

export function normaliseSummary(s: ImportBody['summary'], language: string | null) {
  return {
    text: s.text,
    outcome: s.outcome,
    sentiment: s.sentiment ?? null,
    topics: s.topics ?? [],
    action_items: s.action_items ?? [],
    escalated_to_human: { value: s.escalated_to_human?.value ?? false, reason: s.escalated_to_human?.reason ?? null },
    lead: s.lead
      ? { name: s.lead.name ?? null, email: s.lead.email ?? null, phone_e164: s.lead.phone_e164 ?? null }
      : null,
    language: s.language ?? language,
  }
}

export async function importConversation(
  runtime: Pick<Runtime, 'database' | 'config' | 'registries'>,
  accountId: string,
  body: ImportBody,
) {
  const startedAt = new Date(body.started_at)
  const endedAt = body.ended_at
    ? new Date(body.ended_at)
    : new Date(startedAt.getTime() + (body.duration_s ?? 0) * 1000)
  if (endedAt.getTime() < startedAt.getTime())
    throw Errors.invalidDateRange('ended_at must not be earlier than started_at.', 'ended_at')
  const identity = Object.fromEntries(
    Object.entries(body.identity ?? {}).filter(([, x]) => x !== null && x !== undefined),
  ) as Record<string, unknown>
  const language = body.language ?? body.summary.language ?? null
  const summary = normaliseSummary(body.summary, language)
  const transcript = body.transcript ?? []
  const now = new Date()
  return runtime.database.tx(async (tx) => {
    const agent = await loadAgent(tx, accountId, body.agent_id)
    const [row] = await tx
      .insert(conversations)
      .values({
        id: sql`'conv_u' || nextval('conversation_seq')`,
        accountId,
        agentId: agent.id,
        agentType: agent.agentType,
        channel: IMPORT_CHANNEL,
        status: 'completed',
        sessionId: IMPORT_SESSION_PREFIX + ulid(),
        externalSessionId: body.external_session_id ?? null,
        agentVersion: agentVersionOf(agent),
        promptVersion: await activePromptLabel(tx, agent, 'phone'),
        model: resolveModel(runtime, agent.useLargeModel),
        startedAt,
        endedAt,
        updatedAt: now,
        identity,
        hasIdentity: ['email', 'phone_e164', 'partner_agent_id'].some((k) => identity[k] != null),
        metrics: {
          duration_s: body.duration_s ?? Math.round((endedAt.getTime() - startedAt.getTime()) / 1000),
          imported: true,
          direction: body.direction,
        },
        summary,
        summaryStatus: 'ready',
        outcome: summary.outcome,
        escalated: summary.escalated_to_human.value,
        language,
        turnCount: transcript.length,
      })
      .returning()
    const turnRows = transcript.length
      ? await tx
          .insert(turns)
          .values(
            transcript.map((t, i) => ({
              conversationId: row.id,
              turnIndex: i,
              speaker: t.speaker,
              text: t.text,
              timestamp: new Date(t.timestamp),
              turnType: TURN_TYPE[t.speaker],
            })),
          )
          .returning()
      : []
    // An imported call is already over: it fires conversation.ended only (never started, no summary.ready,
    // the summary arrives with it). data is the conversation as GET shows it, which is also the answer.
    const out = await conversationResource(tx, row, turnRows)
    await emitEvent(tx, { accountId, type: 'conversation.ended', data: out, at: now })
    return out
  })
}

export const HISTORY_WINDOW_MS = 30 * 86_400_000
export const HISTORY_CALLS = 3

export interface RecentCall {
  conversation_id: string
  date: string
  /** inbound (the number called the account) or outbound (the account called it). */
  direction: 'inbound' | 'outbound'
  outcome: string | null
  summary: string | null
}

/** The calls of rule 4: placed or answered here (phone channels) and imported ones (channel import; before
 *  imports had their own channel they carried the phone channel of their direction, which still matches). */
const CALL_CHANNELS = ['phone_outbound', 'phone_inbound', IMPORT_CHANNEL]

/** Which way a call went: its phone channel says it, an import keeps it in metrics.direction. */
function directionOf(channel: string, metrics: Record<string, unknown> | null): RecentCall['direction'] {
  if (channel === 'phone_outbound') return 'outbound'
  if (channel === IMPORT_CHANNEL && metrics?.direction === 'outbound') return 'outbound'
  return 'inbound'
}

/**
 * The inbound phone history block (contract runtime rule 4): the last 3 calls between the account and
 * this number within 30 days before `now`, newest first: outbound calls the platform placed, imported
 * calls, and (issue 15) earlier inbound calls, except `exclude` (the call being answered). Date, outcome and summary text only, never the transcript.
 */
export async function recentCallsFor(
  ex: Executor | Database,
  accountId: string,
  phoneE164: string,
  now = new Date(),
  exclude?: string,
): Promise<RecentCall[]> {
  const db = 'db' in ex ? ex.db : ex
  const c = conversations
  const rows = await db
    .select({
      id: c.id,
      startedAt: c.startedAt,
      channel: c.channel,
      metrics: c.metrics,
      outcome: c.outcome,
      summary: c.summary,
    })
    .from(c)
    .where(
      and(
        eq(c.accountId, accountId),
        isNull(c.deletedAt),
        gte(c.startedAt, new Date(now.getTime() - HISTORY_WINDOW_MS)),
        lte(c.startedAt, now),
        sql`${c.identity}->>'phone_e164' = ${phoneE164}`,
        ne(c.id, exclude ?? ''),
        inArray(c.channel, CALL_CHANNELS),
      ),
    )
    .orderBy(desc(c.startedAt), desc(c.id))
    .limit(HISTORY_CALLS)
  return rows.map((r) => ({
    conversation_id: r.id,
    date: r.startedAt.toISOString(),
    direction: directionOf(r.channel, r.metrics as Record<string, unknown> | null),
    outcome: r.outcome,
    summary: typeof r.summary?.text === 'string' ? (r.summary.text as string) : null,
  }))
}
