import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount, loadAgent } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { KbStatus } from '~/domain/kb/schemas-summary'
import { kbStatus } from '~/domain/kb/status'
import { crawlProgress } from '~/domain/kb/crawl-progress'

export default defineApiRoute({
  summary: 'Knowledge status',
  description:
    'Summary state (status none, ready or rebuilding; stale; last_job; pending_sources; version), the crawl running in this process (idle after a restart), vector_sync (always null, retired) and the keep-as-is sizes per surface: chat, and calls (phone and voice_chat) with the documents dropped from the calls block and summarised instead.',
  tags: ['Knowledge base'],
  scope: 'kb:read',
  dataRoute: true,
  params: AgentParams,
  response: KbStatus,
  errors: ['invalid_id', 'agent_not_found'],
  async handler({ runtime, principal, account, params }) {
    const agent = await loadAgent(runtime.database.db, agentAccount(principal, account), params.agt)
    // crawl is process-local (contract): it reads idle after a restart even if a crawl ran.
    return kbStatus(runtime.database.db, agent, { crawl: () => crawlProgress(agent.id) })
  },
})
