import * as v from 'valibot'
import { defineApiRoute } from '../../../../../utils/define-api-route'
import { agentAccount, loadAgent } from '../../../../../domain/agents/agents'
import { AgentParams } from '../../../../../domain/agents/schemas'
import { readSummary } from '../../../../../domain/kb/summary'

const Ts = v.nullable(v.pipe(v.string(), v.isoTimestamp()))
const KbSummary = v.object({
  agent_id: v.string(), text: v.nullable(v.string()), version: v.number(), source: v.nullable(v.string()), stale: v.boolean(), updated_at: Ts,
})

export default defineApiRoute({
  summary: "The agent's knowledge summary",
  description: 'The readable text every surface runs on, written by the build and by reindex. version moves on every rewrite.',
  tags: ['Knowledge base'],
  scope: 'kb:read',
  dataRoute: true,
  params: AgentParams,
  response: KbSummary,
  errors: ['invalid_id', 'agent_not_found'],
  async handler({ runtime, principal, account, params }) {
    const agent = await loadAgent(runtime.database.db, agentAccount(principal, account), params.agt)
    const s = await readSummary(runtime.database.db, agent.id)
    return { agent_id: agent.id, text: s?.text ?? null, version: s?.version ?? 0, source: s?.source ?? null, stale: s?.stale ?? false, updated_at: s?.updatedAt.toISOString() ?? null }
  },
})
