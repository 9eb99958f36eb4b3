import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount, loadAgent } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { KbSummary } from '~/domain/kb/schemas-summary'
import { presentSummary } from '~/domain/kb/status'

export default defineApiRoute({
  summary: "The agent's knowledge summary",
  description:
    'The readable text every surface runs on, written by the build and by reindex, or replaced by PATCH. version moves on every rewrite; pending_sources counts documents the summary has not read yet; stale never clears on its own, only a rebuild clears it.',
  tags: ['Knowledge base'],
  scope: 'kb:read',
  dataRoute: true,
  params: AgentParams,
  response: KbSummary,
  errors: ['invalid_id', 'agent_not_found'],
  async handler({ runtime, principal, account, params }) {
    const agent = await loadAgent(runtime.database.db, agentAccount(principal, account), params.agt)
    return presentSummary(runtime.database.db, agent.id)
  },
})
