// The analysis of one ended conversation at its agent's current analysis version (decisions "Conversation
// analysis"), written by the conversation.analyze job (queued after the summary) and by backfills. Once per
// (conversation, version): the row's primary key decides, so a redelivered job, a backfill racing the end
// job or a second backfill writes nothing more, and conversation.analyzed is emitted only by the insert
// that won. Test-run calls are never analysed.
import { and, asc, eq, sql } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { agents, conversationAnalyses, conversations, turns } from '~/db/schema'
import type { ChatEngine, ExtractRequest } from '~/kit/chat-engine'
import type { JobContext } from '~/kit/job'
import { defaultRedaction } from '~/domain/accounts/accounts'
import { emitEvent } from '~/domain/events/emit'
import { presentAnalysis } from '~/domain/conversations/present'
import { extractDeterministic } from './deterministic'
import { withEvidence, type Evidence, type Value } from './evidence'
import { analysisOf } from './schemas'

export const ANALYZE_JOB = 'conversation.analyze'

export interface AnalysisDoc {
  analysis_version: number
  values: Record<string, Value>
  evidence: Record<string, Evidence[]>
  success: boolean | null
  analyzed_at: string
}

/** Queues the analysis of an ended conversation when its agent has an analysis setting (the key folds repeats). */
export async function queueAnalysis(database: Database, send: JobContext['send'], conversationId: string) {
  const [row] = await database.db
    .select({ testRunId: conversations.testRunId, version: agents.analysisVersion, settings: agents.settings })
    .from(conversations)
    .innerJoin(agents, eq(agents.id, conversations.agentId))
    .where(eq(conversations.id, conversationId))
  if (!row || row.testRunId || !analysisOf(row.settings)) return
  await send(
    ANALYZE_JOB,
    { conversation_id: conversationId, analysis_version: row.version },
    { singletonKey: `${conversationId}:${row.version}` },
  )
}

/** Analyses one conversation at the agent's current version; answers whether this call wrote the analysis. */
export async function analyzeConversation(database: Database, engine: ChatEngine, conversationId: string) {
  const db = database.db
  const [conv] = await db.select().from(conversations).where(eq(conversations.id, conversationId))
  if (!conv?.agentId || conv.testRunId || conv.deletedAt || conv.status === 'in_progress') return false
  const [agent] = await db.select().from(agents).where(eq(agents.id, conv.agentId))
  const setting = agent && analysisOf(agent.settings)
  if (!setting) return false
  const version = agent.analysisVersion
  const [done] = await db
    .select({ v: conversationAnalyses.analysisVersion })
    .from(conversationAnalyses)
    .where(and(eq(conversationAnalyses.conversationId, conv.id), eq(conversationAnalyses.analysisVersion, version)))
  if (done) return false
  const rows = await db.select().from(turns).where(eq(turns.conversationId, conv.id)).orderBy(asc(turns.turnIndex))
  const req: ExtractRequest = {
    fields: setting.fields,
    successCriteria: setting.success_criteria,
    // The stored text, as read back: evidence offsets index exactly this.
    turns: rows
      .filter((t) => t.turnType !== 'tool' && t.text)
      .map((t) => ({ index: t.turnIndex, speaker: t.speaker === 'visitor' ? 'visitor' : 'agent', text: t.text })),
  }
  const result = engine.extract ? await engine.extract(req) : extractDeterministic(req)
  const values: Record<string, Value> = {}
  const evidence: Record<string, Evidence[]> = {}
  for (const f of setting.fields) {
    const kept = withEvidence(f, req.turns, result.values[f.name])
    values[f.name] = kept.value
    evidence[f.name] = kept.evidence
  }
  const success = typeof result.success === 'boolean' ? result.success : null
  const at = new Date()
  const doc: AnalysisDoc = { analysis_version: version, values, evidence, success, analyzed_at: at.toISOString() }
  const redact = await defaultRedaction(database, conv.accountId)
  return database.tx(async (tx) => {
    const inserted = await tx
      .insert(conversationAnalyses)
      .values({
        conversationId: conv.id,
        analysisVersion: version,
        accountId: conv.accountId,
        agentId: conv.agentId!,
        values,
        evidence,
        success,
        analyzedAt: at,
      })
      .onConflictDoNothing()
      .returning({ v: conversationAnalyses.analysisVersion })
    if (!inserted.length) return false
    // The row shows the newest version: an older job finishing late does not replace a newer analysis.
    await tx
      .update(conversations)
      .set({ analysis: doc as unknown as Record<string, unknown> })
      .where(
        and(
          eq(conversations.id, conv.id),
          sql`(${conversations.analysis} IS NULL OR (${conversations.analysis}->>'analysis_version')::int < ${version})`,
        ),
      )
    await emitEvent(tx, {
      accountId: conv.accountId,
      type: 'conversation.analyzed',
      data: {
        conversation_id: conv.id,
        account_id: conv.accountId,
        agent_id: conv.agentId,
        analysis: presentAnalysis(doc, redact),
      },
      at,
    })
    return true
  })
}
