import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { requestSync } from '~/domain/kb/sync'
import { KbSync } from '~/domain/kb/sync-schemas'

export default defineApiRoute({
  summary: 'Sync the knowledge with its websites',
  description:
    "Visits every URL-sourced document again after the response: a page whose sitemap lastmod is older than its last fetch is skipped, the others are asked for with If-None-Match / If-Modified-Since; a page that answers is re-ingested only when the hash of its main text changed (navigation and footer do not count); 404 and 410 follow kb_sync.deletion; links and sitemaps of site sources add new pages within the plan's page cap. Read the outcome in GET kb/syncs/{sync}; kb.synced is emitted when it ends, and with kb_sync.reindex the summary is rebuilt when a document changed. 409 sync_in_progress while a sync of the agent runs.",
  tags: ['Knowledge base'],
  scope: 'kb:write',
  rateClass: 'build',
  dataRoute: true,
  params: AgentParams,
  status: 202,
  response: KbSync,
  errors: ['invalid_id', 'agent_not_found', 'sync_in_progress'],
  handler: ({ runtime, principal, account, params }) =>
    requestSync(runtime, agentAccount(principal, account), params.agt),
})
