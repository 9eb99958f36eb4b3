// The knowledge summary store: one text per agent that every surface reads. The build's summary step
// and reindex write it through the chat engine; a manual replace is overwritten by the next rebuild.
import { and, asc, eq, inArray } from 'drizzle-orm'
import type { Executor } from '../../db/client'
import { kbDocuments, kbSummaries } from '../../db/schema'
import type { ChatEngine } from '../../kit/chat-engine'

export const SUMMARY_MAX_CHARS = 6000

/** Every indexed document that is not kept as is: what the summariser reads. */
export async function summarySources(ex: Executor, agentId: string) {
  return ex.select({ id: kbDocuments.id, title: kbDocuments.title, text: kbDocuments.text, url: kbDocuments.url }).from(kbDocuments)
    .where(and(eq(kbDocuments.agentId, agentId), eq(kbDocuments.status, 'indexed'), eq(kbDocuments.keepVerbatim, false)))
    .orderBy(asc(kbDocuments.createdAt), asc(kbDocuments.id))
}

/** The summary text of every current source, and the ids it read (marked summarised when it is written). */
export async function buildSummary(ex: Executor, engine: ChatEngine, agentId: string): Promise<{ text: string; sourceIds: string[] }> {
  const sources = await summarySources(ex, agentId)
  if (!sources.length) throw new Error('No indexed documents to summarise.')
  const text = await engine.summarize(sources.map((s) => ({ title: s.title ?? s.url ?? '', text: s.text ?? '' })), { maxChars: SUMMARY_MAX_CHARS })
  return { text, sourceIds: sources.map((s) => s.id) }
}

/** The documents a rebuild read are no longer pending. */
export async function markSummarized(ex: Executor, ids: string[], at = new Date()) {
  if (ids.length) await ex.update(kbDocuments).set({ summarizedAt: at }).where(inArray(kbDocuments.id, ids))
}

/**
 * A new or changed document makes the summary stale (contract: it never clears on its own, only a
 * rebuild does). Call it in the transaction that indexes or changes the document.
 */
export async function markSummaryStale(ex: Executor, agent: { id: string; accountId: string }) {
  await ex.insert(kbSummaries).values({ agentId: agent.id, accountId: agent.accountId, stale: true })
    .onConflictDoUpdate({ target: kbSummaries.agentId, set: { stale: true } })
}

export async function writeSummary(ex: Executor, agent: { id: string; accountId: string }, text: string, source: 'build' | 'reindex' | 'manual', job: Record<string, unknown> | null) {
  const now = new Date()
  const [current] = await ex.select().from(kbSummaries).where(eq(kbSummaries.agentId, agent.id)).for('update')
  if (current) {
    await ex.update(kbSummaries).set({ text, version: current.version + 1, source, stale: source === 'manual' ? current.stale : false, lastJob: job ?? current.lastJob, updatedAt: now })
      .where(eq(kbSummaries.agentId, agent.id))
  } else {
    await ex.insert(kbSummaries).values({ agentId: agent.id, accountId: agent.accountId, text, version: 1, source, stale: false, lastJob: job, updatedAt: now })
  }
}

export async function readSummary(ex: Executor, agentId: string) {
  const [row] = await ex.select().from(kbSummaries).where(eq(kbSummaries.agentId, agentId))
  return row ?? null
}
