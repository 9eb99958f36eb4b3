// A `phone` test goes through the whole voice loop (decisions "Test runs"): a phone_inbound conversation
// marked with its run, a simulated caller who says each turn through the offline speech provider over the
// simulated network's media protocol, and the voice session that listens, transcribes, answers and speaks as
// on any call. The conversation is the session's working state only: it has no caller number (so nothing goes
// on the do-not-call list and no call history joins the prompt), it is in no list, not billed and sends no
// event (test_run_id, see finish.ts and persistTurn), and it is deleted once its turns are read.
import { randomUUID } from 'node:crypto'
import { and, asc, eq, inArray, sql } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { conversations, turns } from '~/db/schema'
import { agentLanguage, agentVersionOf, resolveModel, type AgentRow } from '~/domain/agents/agents'
import { mediaToken } from '~/domain/calls/inbound'
import { INSTANCE_ID } from '~/domain/calls/instance'
import { talk } from '~/domain/calls/simulator'
import type { SessionRuntime } from '~/kit/runtime'
import type { TurnOutcome } from './assertions'

/** How long the session may take to close the call once the caller has hung up. */
const CLOSE_WAIT_MS = 60_000

/** Deletes the test calls of a run (a finished attempt's, or those a crashed delivery left behind). */
export async function dropTestCalls(database: Database, runId: string, ids?: string[]) {
  await database.tx(async (tx) => {
    const where = and(eq(conversations.testRunId, runId), ids ? inArray(conversations.id, ids) : undefined)
    const gone = await tx.select({ id: conversations.id }).from(conversations).where(where)
    if (!gone.length) return
    const list = gone.map((c) => c.id)
    await tx.delete(turns).where(inArray(turns.conversationId, list))
    await tx.delete(conversations).where(inArray(conversations.id, list))
  })
}

/** The turns of a test call as the test's turns: each visitor turn with the agent's turns that followed it. */
function outcomesOf(rows: (typeof turns.$inferSelect)[]): TurnOutcome[] {
  const out: TurnOutcome[] = []
  for (const t of rows) {
    if (t.speaker === 'visitor') {
      out.push({ user: t.text, answer: '', tools: [], unanswered: false, escalated: false })
      continue
    }
    const cur = out.at(-1)
    if (!cur || t.speaker !== 'agent') continue
    if (t.turnType === 'tool' && t.tool) {
      const result = (t.tool.result ?? {}) as { ok?: boolean; message?: string }
      cur.tools.push({
        name: String(t.tool.name ?? ''),
        arguments: (t.tool.arguments ?? {}) as Record<string, unknown>,
        ok: result.ok === true,
        message: String(result.message ?? ''),
      })
    } else if (t.turnType === 'answer' || t.turnType === 'handoff') {
      cur.answer = cur.answer ? `${cur.answer} ${t.text}` : t.text
      cur.unanswered ||= t.unanswered
      cur.escalated ||= t.turnType === 'handoff'
    }
  }
  return out
}

/**
 * One attempt of a phone test: the call, then what the agent answered to each utterance. `candidateId`
 * names the phone prompt version the session talks to (null: the active phone prompt).
 */
export async function phoneAttempt(
  runtime: SessionRuntime,
  runId: string,
  agent: AgentRow,
  promptVersion: string | null,
  candidateId: string | null,
  utterances: string[],
): Promise<TurnOutcome[]> {
  const { database } = runtime
  const providerCallId = `test_${randomUUID()}`
  const now = new Date()
  const [conv] = await database.db
    .insert(conversations)
    .values({
      id: sql`'conv_u' || nextval('conversation_seq')`,
      accountId: agent.accountId,
      agentId: agent.id,
      agentType: agent.agentType,
      channel: 'phone_inbound',
      status: 'in_progress',
      sessionId: `test_${runId}_${providerCallId}`,
      agentVersion: agentVersionOf(agent),
      promptVersion,
      model: resolveModel(runtime, agent.useLargeModel),
      startedAt: now,
      updatedAt: now,
      custom: {
        test_run_id: runId,
        provider: 'simulated',
        provider_call_id: providerCallId,
        prompt_version_id: candidateId,
      },
      language: agentLanguage(agent),
      // Reconciled like any call if this instance dies mid-test (closed without billing, see finish.ts).
      ownerInstance: INSTANCE_ID,
      testRunId: runId,
    })
    .returning({ id: conversations.id })
  try {
    await talk(
      runtime,
      providerCallId,
      {
        kind: 'connect',
        mediaUrl: '',
        params: { conversation_id: conv.id, token: mediaToken(runtime.config.secret, conv.id) },
      },
      { utterances },
    )
    // The caller has hung up; the session writes its last turn, then closes the conversation.
    const deadline = Date.now() + CLOSE_WAIT_MS
    for (;;) {
      const [row] = await database.db
        .select({ status: conversations.status })
        .from(conversations)
        .where(eq(conversations.id, conv.id))
      if (row?.status !== 'in_progress') break
      if (Date.now() > deadline) throw new Error('The simulated call did not end.')
      await new Promise((r) => setTimeout(r, 50))
    }
    const rows = await database.db
      .select()
      .from(turns)
      .where(eq(turns.conversationId, conv.id))
      .orderBy(asc(turns.turnIndex))
    return outcomesOf(rows)
  } finally {
    await dropTestCalls(database, runId, [conv.id])
  }
}
