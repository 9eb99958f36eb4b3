import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { Build } from '~/domain/builds/schemas'
import { getLatestBuild } from '~/domain/builds/builds'

export default defineApiRoute({
  summary: "The agent's latest build",
  description:
    'Build status and each step (crawl, summary, greeting, instructions) with status queued, running, succeeded, failed or skipped, timestamps, duration and error.',
  tags: ['Agents'],
  scope: 'agents:read',
  dataRoute: true,
  params: AgentParams,
  response: Build,
  errors: ['invalid_id', 'agent_not_found', 'not_found'],
  handler: ({ runtime, principal, account, params }) =>
    getLatestBuild(runtime.database, agentAccount(principal, account), params.agt),
})
