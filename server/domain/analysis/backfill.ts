// POST /agents/{agt}/analysis/backfill (decisions "Conversation analysis"): analyses the agent's ended
// conversations that lack its current analysis version, in batches of BATCH by conversation id, each batch
// a job that queues the next. Re-running adds nothing: a conversation with the version is not selected, and
// the primary key of conversation_analyses folds any race. A batch whose agent moved to another version
// stops: the new version's own backfill (or the end of each conversation) takes over.
import { and, asc, count, eq, gt, gte, isNull, lt, ne, notExists, sql, type SQL } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { agents, conversationAnalyses, conversations } from '~/db/schema'
import type { ChatEngine } from '~/kit/chat-engine'
import type { JobContext } from '~/kit/job'
import type { Runtime } from '~/kit/runtime'
import { apiError } from '~/lib/errors'
import { requireOrder } from '~/lib/window'
import { loadAgent } from '~/domain/agents/rows'
import { analyzeConversation } from './analyze'
import { analysisOf, type BackfillBody } from './schemas'

export const BACKFILL_JOB = 'analysis.backfill'
export const BATCH = 100
/** Conversations analysed at once inside a batch (engine calls in flight per backfill). */
const PARALLEL = 4

export interface BackfillJob {
  account_id: string
  agent_id: string
  analysis_version: number
  from: string | null
  to: string | null
  after: string | null
}

const c = conversations
function lacking(job: Omit<BackfillJob, 'after'>): SQL {
  const conds: (SQL | undefined)[] = [
    eq(c.accountId, job.account_id),
    eq(c.agentId, job.agent_id),
    ne(c.status, 'in_progress'),
    isNull(c.deletedAt),
    isNull(c.testRunId),
    notExists(
      sql`(SELECT 1 FROM ${conversationAnalyses} a WHERE a.conversation_id = ${c.id} AND a.analysis_version = ${job.analysis_version})`,
    ),
  ]
  if (job.from) conds.push(gte(c.startedAt, new Date(job.from)))
  if (job.to) conds.push(lt(c.startedAt, new Date(job.to)))
  return and(...conds)!
}

export async function startBackfill(runtime: Runtime, accountId: string, agentId: string, body: BackfillBody) {
  const db = runtime.database.db
  const agent = await loadAgent(db, accountId, agentId)
  const from = body.from ?? null
  const to = body.to ?? null
  requireOrder(from ? new Date(from) : null, to ? new Date(to) : null)
  if (!analysisOf(agent.settings))
    throw apiError('invalid_state', 'The agent has no analysis setting: PATCH /agents/{agt} {analysis} first.')
  const job: BackfillJob = {
    account_id: accountId,
    agent_id: agent.id,
    analysis_version: agent.analysisVersion,
    from,
    to,
    after: null,
  }
  const [{ n }] = await db.select({ n: count() }).from(c).where(lacking(job))
  await runtime.queue.send(BACKFILL_JOB, job as unknown as Record<string, unknown>)
  return {
    agent_id: agent.id,
    analysis_version: agent.analysisVersion,
    from,
    to,
    pending: Number(n),
    status: 'queued' as const,
  }
}

/** One batch; queues the next when this one was full. Answers how many analyses it wrote. */
export async function runBackfillBatch(
  database: Database,
  engine: ChatEngine,
  send: JobContext['send'],
  job: BackfillJob,
): Promise<number> {
  const db = database.db
  const [agent] = await db
    .select({ v: agents.analysisVersion })
    .from(agents)
    .where(and(eq(agents.id, job.agent_id), eq(agents.accountId, job.account_id)))
  if (!agent || agent.v !== job.analysis_version) return 0
  const ids = (
    await db
      .select({ id: c.id })
      .from(c)
      .where(and(lacking(job), job.after ? gt(c.id, job.after) : undefined))
      .orderBy(asc(c.id))
      .limit(BATCH)
  ).map((r) => r.id)
  let written = 0
  for (let i = 0; i < ids.length; i += PARALLEL) {
    const done = await Promise.all(ids.slice(i, i + PARALLEL).map((id) => analyzeConversation(database, engine, id)))
    written += done.filter(Boolean).length
  }
  if (ids.length === BATCH)
    await send(BACKFILL_JOB, { ...job, after: ids.at(-1)! } as unknown as Record<string, unknown>)
  return written
}
