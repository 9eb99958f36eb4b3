// POST /conversations/import: a call handled by an external voice stack, with its summary. It becomes a
// completed conv_u conversation (summary ready) stamped with the agent's version, the label of its active
// phone prompt and its model at import time, and feeds the inbound phone history block (recentCallsFor).
import { and, desc, eq, gte, isNull, lte, ne, or, sql } from 'drizzle-orm'
import { ulid } from 'ulid'
import type { Database, Executor } from '~/db/client'
import { conversations, turns } from '~/db/schema'
import { Errors } from '~/lib/errors'
import type { Runtime } from '~/kit/runtime'
import { activePromptLabel, agentVersionOf, loadAgent, resolveModel } from '~/domain/agents/agents'
import { emitEvent } from '~/domain/events/emit'
import { conversationResource } from './read'
import type { ImportBody } from './schemas'

/** Session ids of imported calls start with imp_ (API chats: api_); recentCallsFor relies on it. */
export const IMPORT_SESSION_PREFIX = 'imp_'
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
        channel: body.channel,
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
  outcome: string | null
  summary: string | null
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
    .select({ id: c.id, startedAt: c.startedAt, outcome: c.outcome, summary: c.summary })
    .from(c)
    .where(
      and(
        eq(c.accountId, accountId),
        isNull(c.deletedAt),
        gte(c.startedAt, new Date(now.getTime() - HISTORY_WINDOW_MS)),
        lte(c.startedAt, now),
        sql`${c.identity}->>'phone_e164' = ${phoneE164}`,
        ne(c.id, exclude ?? ''),
        or(
          eq(c.channel, 'phone_outbound'),
          eq(c.channel, 'phone_inbound'),
          sql`${c.sessionId} LIKE ${IMPORT_SESSION_PREFIX + '%'}`,
        ),
      ),
    )
    .orderBy(desc(c.startedAt), desc(c.id))
    .limit(HISTORY_CALLS)
  return rows.map((r) => ({
    conversation_id: r.id,
    date: r.startedAt.toISOString(),
    outcome: r.outcome,
    summary: typeof r.summary?.text === 'string' ? (r.summary.text as string) : null,
  }))
}
