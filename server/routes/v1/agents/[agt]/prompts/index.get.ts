import { asList, defineApiRoute } from '~/http/define-api-route'
import * as v from 'valibot'
import { AgentParams, PromptListQuery, PromptVersion } from '~/domain/agents/schemas'
import { agentAccount } from '~/domain/agents/agents'
import { listPrompts } from '~/domain/agents/prompts'

export default defineApiRoute({
  summary: 'List prompt versions',
  description:
    'Every version of the agent, newest first, optionally of one type (phone, chat, voice_chat). body is omitted; has_more is always false and next_cursor null.',
  tags: ['Prompts'],
  scope: 'agents:read',
  dataRoute: true,
  params: AgentParams,
  query: PromptListQuery,
  response: v.object({ data: v.array(PromptVersion) }),
  errors: ['invalid_id', 'agent_not_found', 'unsupported_filter'],
  handler: async ({ runtime, principal, account, params, query }) =>
    asList(await listPrompts(runtime.database, agentAccount(principal, account), params.agt, query.type)),
})
