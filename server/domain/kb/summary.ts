// The knowledge summary store: one text per agent that every surface reads. The build's summary step
// and reindex write it through the chat engine; a manual replace is overwritten by the next rebuild.
import { and, asc, count, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm'
import type { Database, Executor } from '~/db/client'
import { agents, kbDocuments, kbSummaries } from '~/db/schema'
import type { ChatEngine } from '~/kit/chat-engine'
import { retryTransient } from '~/db/transient'
import { checkBalance } from '~/domain/conversations/billing'
import { consumeQuota } from '~/domain/limits/quotas'
import { assembleKnowledgeBlock, droppedIds, planVerbatim, type KnowledgeSurface, type VerbatimPlan } from './verbatim'
import { internalDetail, PUBLIC_MESSAGES, publicMessage } from './public-error'

export const SUMMARY_MAX_CHARS = 6000

/** Keep-as-is sizes of an agent's indexed documents (no text), planned for its tier. */
export async function verbatimPlanOf(ex: Executor, agentId: string, largeTier?: boolean): Promise<VerbatimPlan> {
  if (largeTier === undefined) {
    const [agent] = await ex.select({ large: agents.useLargeModel }).from(agents).where(eq(agents.id, agentId))
    largeTier = agent?.large ?? false
  }
  const docs = await ex
    .select({
      id: kbDocuments.id,
      title: kbDocuments.title,
      chars: kbDocuments.chars,
      keepVerbatim: kbDocuments.keepVerbatim,
      verbatimInCalls: kbDocuments.verbatimInCalls,
      createdAt: kbDocuments.createdAt,
    })
    .from(kbDocuments)
    .where(and(eq(kbDocuments.agentId, agentId), eq(kbDocuments.status, 'indexed'), eq(kbDocuments.keepVerbatim, true)))
  return planVerbatim(docs, { largeTier })
}

/** What the summariser reads: every indexed document that is not kept as is, plus the keep-as-is documents
 *  a surface leaves out for its cap (contract: "summarised instead"), oldest first. */
export async function summarySources(ex: Executor, agentId: string) {
  const dropped = droppedIds(await verbatimPlanOf(ex, agentId))
  return ex
    .select({
      id: kbDocuments.id,
      title: kbDocuments.title,
      text: kbDocuments.text,
      url: kbDocuments.url,
      updatedAt: kbDocuments.updatedAt,
    })
    .from(kbDocuments)
    .where(
      and(
        eq(kbDocuments.agentId, agentId),
        eq(kbDocuments.status, 'indexed'),
        dropped.length
          ? or(eq(kbDocuments.keepVerbatim, false), inArray(kbDocuments.id, dropped))
          : eq(kbDocuments.keepVerbatim, false),
      ),
    )
    .orderBy(asc(kbDocuments.createdAt), asc(kbDocuments.id))
}

/** Sources new or changed since the summary last read them (summarized_at null or older than updated_at). */
export async function pendingSources(ex: Executor, agentId: string): Promise<number> {
  const dropped = droppedIds(await verbatimPlanOf(ex, agentId))
  const [row] = await ex
    .select({ n: count() })
    .from(kbDocuments)
    .where(
      and(
        eq(kbDocuments.agentId, agentId),
        eq(kbDocuments.status, 'indexed'),
        dropped.length
          ? or(eq(kbDocuments.keepVerbatim, false), inArray(kbDocuments.id, dropped))
          : eq(kbDocuments.keepVerbatim, false),
        or(isNull(kbDocuments.summarizedAt), lt(kbDocuments.summarizedAt, kbDocuments.updatedAt)),
      ),
    )
  return Number(row?.n ?? 0)
}

/** The summary text of every current source, and the ids it read (marked summarised when it is written). */
export async function buildSummary(
  ex: Executor,
  engine: ChatEngine,
  agentId: string,
): Promise<{ text: string; sourceIds: string[]; read: { id: string; updatedAt: Date }[] }> {
  const sources = await summarySources(ex, agentId)
  if (!sources.length) throw new Error('No indexed documents to summarise.')
  const text = await engine.summarize(
    sources.map((s) => ({ title: s.title ?? s.url ?? '', text: s.text ?? '' })),
    { maxChars: SUMMARY_MAX_CHARS },
  )
  return { text, sourceIds: sources.map((s) => s.id), read: sources.map((s) => ({ id: s.id, updatedAt: s.updatedAt })) }
}

/** The documents a rebuild read are no longer pending. */
export async function markSummarized(ex: Executor, ids: string[], at = new Date()) {
  if (ids.length) await ex.update(kbDocuments).set({ summarizedAt: at }).where(inArray(kbDocuments.id, ids))
}

/** Marks each document read as summarised at the version it was read, unless it changed since: a change
 *  during a rebuild stays pending. Independent of the application's and the database's clocks. */
export async function markSummarizedAsRead(ex: Executor, read: { id: string; updatedAt: Date }[]) {
  for (const d of read) {
    // updated_at keeps microseconds, a JS Date milliseconds: compare at milliseconds, copy the column itself.
    await ex
      .update(kbDocuments)
      .set({ summarizedAt: sql`${kbDocuments.updatedAt}` })
      .where(
        and(
          eq(kbDocuments.id, d.id),
          sql`date_trunc('milliseconds', ${kbDocuments.updatedAt}) = ${d.updatedAt.toISOString()}::timestamptz`,
        ),
      )
  }
}

/**
 * The lock order of an agent's knowledge: the agent row first (FOR NO KEY UPDATE), then its documents and
 * summary. Changing a document or the summary bumps the agent's revision by trigger, so a transaction that
 * took the summary or a document before the agent deadlocked with one that went the other way (a build's
 * summary write against an ingest's "summary is stale" under the 15-minute chaos run). Every transaction
 * that writes kb_documents rows and then kb_summaries, or the reverse, calls this first.
 */
export async function lockKnowledge(ex: Executor, agentId: string) {
  await ex.select({ id: agents.id }).from(agents).where(eq(agents.id, agentId)).for('no key update')
}

/**
 * A new or changed document makes the summary stale (contract: it never clears on its own, only a
 * rebuild does). Call it in the transaction that indexes or changes the document.
 */
export async function markSummaryStale(ex: Executor, agent: { id: string; accountId: string }) {
  await ex
    .insert(kbSummaries)
    .values({ agentId: agent.id, accountId: agent.accountId, stale: true })
    .onConflictDoUpdate({ target: kbSummaries.agentId, set: { stale: true } })
}

export async function writeSummary(
  ex: Executor,
  agent: { id: string; accountId: string },
  text: string,
  source: 'build' | 'reindex' | 'manual',
  job: Record<string, unknown> | null,
) {
  const now = new Date()
  await lockKnowledge(ex, agent.id)
  const [current] = await ex.select().from(kbSummaries).where(eq(kbSummaries.agentId, agent.id)).for('update')
  if (current) {
    await ex
      .update(kbSummaries)
      .set({
        text,
        version: current.version + 1,
        source,
        stale: source === 'manual' ? current.stale : false,
        lastJob: job ?? current.lastJob,
        updatedAt: now,
      })
      .where(eq(kbSummaries.agentId, agent.id))
  } else {
    await ex.insert(kbSummaries).values({
      agentId: agent.id,
      accountId: agent.accountId,
      text,
      version: 1,
      source,
      stale: false,
      lastJob: job,
      updatedAt: now,
    })
  }
}

export async function readSummary(ex: Executor, agentId: string) {
  const [row] = await ex.select().from(kbSummaries).where(eq(kbSummaries.agentId, agentId))
  return row ?? null
}

// ---- Reindex (POST /agents/{agt}/kb/reindex → the kb.reindex job) ----

export const REINDEX_JOB = 'kb.reindex'
/** A reindex queued or running longer than this is taken over by the next delivery and no longer shown as rebuilding. */
export const REINDEX_STALE_MS = 15 * 60_000

export interface ReindexJob {
  job: 'reindex'
  status: 'queued' | 'running' | 'succeeded' | 'failed'
  request_id: string
  requested_at: string
  started_at: string | null
  finished_at: string | null
  error: string | null
}

const asReindex = (j: unknown): ReindexJob | null =>
  j && typeof j === 'object' && (j as any).job === 'reindex' ? (j as ReindexJob) : null

/** Whether a reindex is queued or running (and not abandoned). */
export function reindexInFlight(lastJob: unknown, now = Date.now()): boolean {
  const j = asReindex(lastJob)
  if (!j || (j.status !== 'queued' && j.status !== 'running')) return false
  return now - Date.parse(j.started_at ?? j.requested_at) < REINDEX_STALE_MS
}

/** Records the request on the summary (creating an empty one, version 0, if the agent has none yet). The
 *  newest request wins: an older queued job finds another request_id and does nothing. */
/**
 * Accepts a reindex request in the caller's transaction: billable engine work (402 when billing blocks),
 * one unit of the daily reindexes quota, and last_job queued under a new request id. The agent row is
 * locked first (lockKnowledge): the last_job write bumps the agent's revision by trigger, and a page
 * admitted beside it holds the agent and then the quota row, so taking the quota or the summary first
 * deadlocked (CI on PostgreSQL, stop 40: POST kb/reindex answered 500 beside an ingest).
 */
export async function acceptReindex(
  tx: Executor,
  agent: { id: string; accountId: string },
  requestId: string,
): Promise<ReindexJob> {
  await lockKnowledge(tx, agent.id)
  await checkBalance(tx, agent.accountId)
  await consumeQuota(tx, agent.accountId, 'reindexes')
  const job: ReindexJob = {
    job: 'reindex',
    status: 'queued',
    request_id: requestId,
    requested_at: new Date().toISOString(),
    started_at: null,
    finished_at: null,
    error: null,
  }
  await tx
    .insert(kbSummaries)
    .values({ agentId: agent.id, accountId: agent.accountId, lastJob: job as unknown as Record<string, unknown> })
    .onConflictDoUpdate({ target: kbSummaries.agentId, set: { lastJob: job as unknown as Record<string, unknown> } })
  return job
}

/** Records `job` as last_job if `requestId` is still the current request. Its own transaction, agent row first. */
export async function recordJobIfCurrent(ex: Database, agentId: string, requestId: string, job: ReindexJob) {
  await retryTransient(() => ex.tx((tx) => setJobIfCurrent(tx, agentId, requestId, job)))
}

export async function setJobIfCurrent(ex: Executor, agentId: string, requestId: string, job: ReindexJob) {
  await lockKnowledge(ex, agentId)
  await ex
    .update(kbSummaries)
    .set({ lastJob: job as unknown as Record<string, unknown> })
    .where(and(eq(kbSummaries.agentId, agentId), sql`${kbSummaries.lastJob}->>'request_id' = ${requestId}`))
}

/**
 * Runs one reindex request. Idempotent: it claims the request (queued, or running but abandoned) first,
 * so a repeated delivery or a superseded request does nothing. Success writes the summary (source
 * reindex, version + 1), marks what it read summarised and clears stale unless a source changed while it
 * ran; failure keeps the text and version, records the error in last_job and logs it.
 */
export async function runReindex(
  ex: Database,
  engine: ChatEngine,
  agentId: string,
  requestId: string,
  log: (m: string, extra?: Record<string, unknown>) => void,
): Promise<ReindexJob | null> {
  const startedAt = new Date().toISOString()
  // The claim bumps the agent's revision by trigger: agent row first, in a transaction (lockKnowledge).
  const [claimed] = await retryTransient(() =>
    ex.tx(async (tx) => {
      await lockKnowledge(tx, agentId)
      return tx
        .update(kbSummaries)
        .set({
          lastJob: sql`jsonb_set(jsonb_set(${kbSummaries.lastJob}, '{status}', '"running"'), '{started_at}', ${JSON.stringify(startedAt)}::jsonb)`,
        })
        .where(
          and(
            eq(kbSummaries.agentId, agentId),
            sql`${kbSummaries.lastJob}->>'request_id' = ${requestId}`,
            or(
              sql`${kbSummaries.lastJob}->>'status' = 'queued'`,
              and(
                sql`${kbSummaries.lastJob}->>'status' = 'running'`,
                sql`(${kbSummaries.lastJob}->>'started_at')::timestamptz < now() - make_interval(secs => ${REINDEX_STALE_MS / 1000})`,
              ),
            ),
          ),
        )
        .returning()
    }),
  )
  if (!claimed) return null
  const job = { ...(claimed.lastJob as unknown as ReindexJob), status: 'running' as const, started_at: startedAt }
  const agent = { id: claimed.agentId, accountId: claimed.accountId }
  try {
    const { text, read } = await buildSummary(ex.db, engine, agentId)
    const done: ReindexJob = { ...job, status: 'succeeded', finished_at: new Date().toISOString(), error: null }
    await ex.tx(async (tx) => {
      await writeSummary(tx, agent, text, 'reindex', null)
      await markSummarizedAsRead(tx, read)
      // A source that changed while the summariser read it is still pending: the summary stays stale.
      const pending = await pendingSources(tx, agentId)
      await tx
        .update(kbSummaries)
        .set({ stale: pending > 0 })
        .where(eq(kbSummaries.agentId, agentId))
      await setJobIfCurrent(tx, agentId, requestId, done)
    })
    return done
  } catch (err) {
    // kb/status shows last_job.error to the tenant: never the engine's or the database's own words.
    const error = publicMessage(err, PUBLIC_MESSAGES.engine)
    const failed: ReindexJob = { ...job, status: 'failed', finished_at: new Date().toISOString(), error }
    log(`kb reindex for ${agentId} failed: ${internalDetail(err)}`, { agent_id: agentId, request_id: requestId })
    await recordJobIfCurrent(ex, agentId, requestId, failed)
    return failed
  }
}

// ---- Runtime ----

/**
 * The knowledge block a conversation turn on `surface` runs on (contract "Runtime knowledge rules" 1–3):
 * the summary, stale or not, then the keep-as-is texts that surface carries. Put it under the prompt with
 * withKnowledge(prompt, block).
 */
export async function knowledgeFor(
  ex: Executor,
  agent: { id: string; useLargeModel: boolean },
  surface: KnowledgeSurface,
): Promise<string> {
  const [summary, docs] = await Promise.all([
    readSummary(ex, agent.id),
    ex
      .select({
        id: kbDocuments.id,
        title: kbDocuments.title,
        text: kbDocuments.text,
        keepVerbatim: kbDocuments.keepVerbatim,
        verbatimInCalls: kbDocuments.verbatimInCalls,
        createdAt: kbDocuments.createdAt,
      })
      .from(kbDocuments)
      .where(
        and(eq(kbDocuments.agentId, agent.id), eq(kbDocuments.status, 'indexed'), eq(kbDocuments.keepVerbatim, true)),
      ),
  ])
  return assembleKnowledgeBlock(surface, summary && summary.version > 0 ? summary.text : null, docs, {
    largeTier: agent.useLargeModel,
  })
}
