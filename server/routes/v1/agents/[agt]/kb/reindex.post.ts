import { randomUUID } from 'node:crypto'
import * as v from 'valibot'
import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount, loadAgent } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { REINDEX_JOB, acceptReindex, recordJobIfCurrent } from '~/domain/kb/summary'

export default defineApiRoute({
  summary: 'Rebuild the knowledge summary',
  description:
    'Reads every non-verbatim document and page (and keep-as-is documents beyond the calls cap) and writes one summary after the response. Success shows as pending_sources 0 and version moved in GET kb/status; a failure is logged and shown in summary.last_job. A newer request supersedes a queued one. 402 payment_required when billing blocks; takes one unit of the daily reindexes quota.',
  tags: ['Knowledge base'],
  scope: 'kb:write',
  rateClass: 'build',
  dataRoute: true,
  params: AgentParams,
  status: 202,
  response: v.object({ agent_id: v.string(), status: v.literal('rebuild_requested') }),
  errors: ['invalid_id', 'agent_not_found', 'payment_required', 'quota_exceeded'],
  async handler({ runtime, principal, account, params }) {
    const agent = await loadAgent(runtime.database.db, agentAccount(principal, account), params.agt)
    const requestId = randomUUID()
    const job = await runtime.database.tx((tx) => acceptReindex(tx, agent, requestId))
    try {
      await runtime.queue.send(REINDEX_JOB, { agent_id: agent.id, request_id: requestId })
    } catch (e) {
      // Not left showing rebuilding: the request failed before any job could run.
      await recordJobIfCurrent(runtime.database, agent.id, requestId, {
        ...job,
        status: 'failed',
        finished_at: new Date().toISOString(),
        error: 'The job queue did not accept the request.',
      })
      throw e
    }
    return { agent_id: agent.id, status: 'rebuild_requested' as const }
  },
})
