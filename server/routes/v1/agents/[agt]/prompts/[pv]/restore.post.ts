import { defineApiRoute } from '~/http/define-api-route'
import { DeployResult, PromptParams, PromptRestore } from '~/domain/agents/schemas'
import { agentAccount } from '~/domain/agents/agents'
import { restorePrompt } from '~/domain/agents/prompts'

export default defineApiRoute({
  summary: 'Restore a prompt version',
  description:
    'Deploys a new version with the old body, labelled <old_label>-restored unless label is given, carrying restored_from; bumps agent_version.',
  tags: ['Prompts'],
  scope: 'agents:admin',
  dataRoute: true,
  params: PromptParams,
  body: PromptRestore,
  status: 201,
  response: DeployResult,
  errors: [
    'invalid_id',
    'agent_not_found',
    'not_found',
    'unsupported_field',
    'validation_error',
    'version_label_exists',
    'tests_failed',
    'quota_exceeded',
  ],
  handler: ({ runtime, principal, account, params, body }) =>
    restorePrompt(runtime, agentAccount(principal, account), params.agt, params.pv, body?.label),
})
