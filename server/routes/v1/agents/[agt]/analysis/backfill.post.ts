import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { startBackfill } from '~/domain/analysis/backfill'
import { BackfillBody, BackfillOut } from '~/domain/analysis/schemas'

export default defineApiRoute({
  summary: "Analyse an agent's past conversations",
  description:
    "Body {from?, to?} (started_at window; both optional). Answers 202 and analyses, in the background and in batches, the agent's " +
    'ended conversations that lack its current analysis_version; pending counts them. Running it again adds nothing: each ' +
    'conversation is analysed once per version, each analysis emitting conversation.analyzed. An agent without an analysis ' +
    'setting is 409 invalid_state. Read the results with include=analysis on GET /conversations (conversations:read).',
  tags: ['Agents'],
  scope: 'agents:write',
  dataRoute: true,
  status: 202,
  params: AgentParams,
  body: BackfillBody,
  response: BackfillOut,
  errors: ['invalid_id', 'agent_not_found', 'unsupported_field', 'invalid_date', 'invalid_date_range', 'invalid_state'],
  handler: ({ runtime, principal, account, params, body }) =>
    startBackfill(runtime, agentAccount(principal, account), params.agt, body),
})
