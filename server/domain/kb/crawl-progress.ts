// Process-local progress of knowledge-base site crawls, per agent. The contract's kb/status `crawl` is
// process-local: it reads idle after a restart even if a crawl ran (the kb_crawls row keeps the record).
export interface CrawlProgress {
  status: 'idle' | 'running'
  crawl_id: string | null
  pages_done: number
  started_at: string | null
}

const running = new Map<string, { crawlId: string; pagesDone: number; startedAt: Date }>()

/** What kb/status shows under `crawl` for this agent. */
export function crawlProgress(agentId: string): CrawlProgress {
  const r = running.get(agentId)
  if (!r) return { status: 'idle', crawl_id: null, pages_done: 0, started_at: null }
  return { status: 'running', crawl_id: r.crawlId, pages_done: r.pagesDone, started_at: r.startedAt.toISOString() }
}

export function crawlStarted(agentId: string, crawlId: string) {
  running.set(agentId, { crawlId, pagesDone: 0, startedAt: new Date() })
}

export function crawlPageDone(agentId: string, crawlId: string) {
  const r = running.get(agentId)
  if (r && r.crawlId === crawlId) r.pagesDone++
}

export function crawlFinished(agentId: string, crawlId: string) {
  if (running.get(agentId)?.crawlId === crawlId) running.delete(agentId)
}
