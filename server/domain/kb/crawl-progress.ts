// Process-local progress of knowledge-base site crawls, per agent. The contract's kb/status `crawl` is
// process-local: it reads idle after a restart even if a crawl ran (the kb_crawls row keeps the record).
export interface CrawlProgress {
  status: 'idle' | 'running'
  crawl_id: string | null
  pages_done: number
  started_at: string | null
}

// Per agent, the crawls running here in start order: two parallel crawls of one agent each keep their
// own count, and the agent reads idle only once both have finished.
const running = new Map<string, { crawlId: string; pagesDone: number; startedAt: Date }[]>()

/** What kb/status shows under `crawl` for this agent: the most recently started crawl still running. */
export function crawlProgress(agentId: string): CrawlProgress {
  const r = running.get(agentId)?.at(-1)
  if (!r) return { status: 'idle', crawl_id: null, pages_done: 0, started_at: null }
  return { status: 'running', crawl_id: r.crawlId, pages_done: r.pagesDone, started_at: r.startedAt.toISOString() }
}

export function crawlStarted(agentId: string, crawlId: string) {
  const list = (running.get(agentId) ?? []).filter((r) => r.crawlId !== crawlId)
  list.push({ crawlId, pagesDone: 0, startedAt: new Date() })
  running.set(agentId, list)
}

export function crawlPageDone(agentId: string, crawlId: string) {
  const r = running.get(agentId)?.find((x) => x.crawlId === crawlId)
  if (r) r.pagesDone++
}

export function crawlFinished(agentId: string, crawlId: string) {
  const list = running.get(agentId)?.filter((r) => r.crawlId !== crawlId)
  if (list?.length) running.set(agentId, list)
  else running.delete(agentId)
}
