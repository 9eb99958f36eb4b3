import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount, loadAgent } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { KbSummary, KbSummaryReplace } from '~/domain/kb/schemas-summary'
import { presentSummary } from '~/domain/kb/status'
import { writeSummary } from '~/domain/kb/summary'

export default defineApiRoute({
  summary: 'Replace the knowledge summary',
  description:
    'A manual override: source becomes manual and version moves; stale and pending_sources are unchanged (a manual text reads no documents). The next reindex or build overwrites it.',
  tags: ['Knowledge base'],
  scope: 'kb:write',
  dataRoute: true,
  params: AgentParams,
  body: KbSummaryReplace,
  patch: true,
  response: KbSummary,
  errors: ['invalid_id', 'agent_not_found', 'empty_update', 'unsupported_field'],
  async handler({ runtime, principal, account, params, body }) {
    const agent = await loadAgent(runtime.database.db, agentAccount(principal, account), params.agt)
    await runtime.database.tx((tx) => writeSummary(tx, agent, body.text, 'manual', null))
    return presentSummary(runtime.database.db, agent.id)
  },
})
