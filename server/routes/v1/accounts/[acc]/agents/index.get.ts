import { defineApiRoute } from '~/http/define-api-route'
import { Errors } from '~/lib/errors'
import { AccountParams, AgentList } from '~/domain/agents/schemas'
import { agentAccount, listAgents } from '~/domain/agents/agents'

export default defineApiRoute({
  summary: 'List the agents of an account',
  description:
    'Not a list envelope: {account_id, agents[], meta}, newest first, no cursor. Each summary carries agent_version, prompt_version, model and knowledge_bases[] (file and page counts; summary freshness is null until a knowledge summary exists).',
  tags: ['Agents'],
  scope: 'agents:read',
  dataRoute: true,
  params: AccountParams,
  response: AgentList,
  errors: ['invalid_id', 'not_found'],
  async handler({ runtime, principal, account, params }) {
    let accountId: string
    try {
      accountId = agentAccount(principal, account, params.acc)
    } catch {
      throw Errors.notFound('Account')
    }
    return listAgents(runtime, accountId)
  },
})
