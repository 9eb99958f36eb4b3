// GET /agents/{agt}/kb/status and the summary as GET/PATCH kb/summary show it (contract "Knowledge status").
import type { Executor } from '~/db/client'
import type { AgentRow } from '~/domain/agents/agents'
import { pendingSources, readSummary, reindexInFlight, verbatimPlanOf } from './summary'

import type { CrawlProgress } from './crawl-progress'
export type { CrawlProgress }

/** What kb/status shows for crawl when no crawl runs in this process (also after a restart). */
export const IDLE_CRAWL: CrawlProgress = { status: 'idle', crawl_id: null, pages_done: 0, started_at: null }

type SummaryRow = NonNullable<Awaited<ReturnType<typeof readSummary>>>

/** none: never written; rebuilding: a reindex is queued or running; ready otherwise (stale or not). */
export function summaryStatus(row: SummaryRow | null, now = Date.now()): 'none' | 'ready' | 'rebuilding' {
  if (row && reindexInFlight(row.lastJob, now)) return 'rebuilding'
  return !row || row.version === 0 ? 'none' : 'ready'
}

/** The summary resource: {agent_id, text, version, source, stale, pending_sources, updated_at, last_job}. */
export async function presentSummary(ex: Executor, agentId: string) {
  const [s, pending] = await Promise.all([readSummary(ex, agentId), pendingSources(ex, agentId)])
  const written = !!s && s.version > 0
  return {
    agent_id: agentId,
    text: written ? s.text : null,
    version: s?.version ?? 0,
    source: written ? s.source : null,
    stale: s?.stale ?? false,
    pending_sources: pending,
    updated_at: written ? s.updatedAt.toISOString() : null,
    last_job: s?.lastJob ?? null,
  }
}

export async function kbStatus(
  ex: Executor,
  agent: Pick<AgentRow, 'id' | 'useLargeModel'>,
  deps: { crawl: (agentId: string) => CrawlProgress } = { crawl: () => IDLE_CRAWL },
) {
  const [s, pending, plan] = await Promise.all([
    readSummary(ex, agent.id),
    pendingSources(ex, agent.id),
    verbatimPlanOf(ex, agent.id, agent.useLargeModel),
  ])
  const size = (p: typeof plan.chat) => ({
    documents: p.included.length,
    chars: p.chars,
    cap: p.cap,
    dropped: p.dropped,
  })
  return {
    agent_id: agent.id,
    summary: {
      status: summaryStatus(s),
      stale: s?.stale ?? false,
      last_job: s?.lastJob ?? null,
      pending_sources: pending,
      version: s?.version ?? 0,
    },
    crawl: deps.crawl(agent.id),
    vector_sync: null,
    verbatim: { chat: size(plan.chat), calls: size(plan.calls) },
  }
}
