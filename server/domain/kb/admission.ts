// Admission of a document against the plan's per-agent caps (decisions "Plan caps"), under the agent row
// lock so that parallel uploads and crawls of one agent are counted together.
import { and, count, eq, inArray, ne } from 'drizzle-orm'
import type { Executor, Tx } from '~/db/client'
import { accounts, kbDocuments } from '~/db/schema'
import { loadAgent } from '~/domain/agents/agents'
import { planTerms } from '~/domain/limits/plans'
import { apiError } from '~/lib/errors'

export async function planOf(ex: Executor, accountId: string): Promise<string> {
  const [a] = await ex.select({ plan: accounts.plan }).from(accounts).where(eq(accounts.id, accountId))
  return a?.plan ?? 'trial'
}

const planLimitReached = (what: string, cap: number, plan: string) =>
  apiError('plan_limit_reached', `This agent has reached the ${plan} plan's cap of ${cap} ${what}.`)

/** Documents of these kinds that count against a cap (failed ones do not: they hold no knowledge). */
export async function countDocs(ex: Executor, agentId: string, kinds: string[]): Promise<number> {
  const [{ n }] = await ex
    .select({ n: count() })
    .from(kbDocuments)
    .where(and(eq(kbDocuments.agentId, agentId), inArray(kbDocuments.kind, kinds), ne(kbDocuments.status, 'failed')))
  return Number(n)
}

export const fileCap = (plan: string) => planTerms(plan).filesPerAgent
export const pageCap = (plan: string) => planTerms(plan).crawlPagesPerAgent

/** Locks the agent (serialising admissions per agent) and refuses when the plan's cap is reached. */
export async function admit(tx: Tx, accountId: string, agentId: string, kind: 'file' | 'page') {
  await loadAgent(tx, accountId, agentId, true)
  const plan = await planOf(tx, accountId)
  const cap = kind === 'file' ? fileCap(plan) : pageCap(plan)
  const used = await countDocs(tx, agentId, kind === 'file' ? ['file', 'text'] : ['page'])
  if (used >= cap) throw planLimitReached(kind === 'file' ? 'files' : 'crawl pages', cap, plan)
  return { plan, cap, used }
}
