import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { getSync } from '~/domain/kb/sync'
import { KbSync, SyncParams } from '~/domain/kb/sync-schemas'

export default defineApiRoute({
  summary: 'Read a knowledge sync',
  description:
    "One sync: trigger, status, pages_checked, not_modified (304 or skipped by the sitemap lastmod), unchanged (answered, same main text), and the URLs added, changed and removed (404 or 410). Unknown or another agent's sync: 404 not_found.",
  tags: ['Knowledge base'],
  scope: 'kb:read',
  dataRoute: true,
  params: SyncParams,
  response: KbSync,
  errors: ['invalid_id', 'agent_not_found', 'not_found'],
  handler: ({ runtime, principal, account, params }) =>
    getSync(runtime.database.db, agentAccount(principal, account), params.agt, params.sync),
})
