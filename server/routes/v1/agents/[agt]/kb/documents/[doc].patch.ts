import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { DocumentParams, DocumentPatch, KbDocument } from '~/domain/kb/document-schemas'
import { patchDocument } from '~/domain/kb/documents'

export default defineApiRoute({
  summary: 'Set keep-as-is flags of a knowledge document',
  description:
    'keep_verbatim (the full text follows the summary in the prompt instead of being summarised) and verbatim_in_calls (kept as is on phone calls too). The flags are read at the start of every conversation and need no rebuild; turning keep_verbatim off makes the document a summary source again, which marks the summary stale.',
  tags: ['Knowledge base'],
  scope: 'kb:write',
  dataRoute: true,
  params: DocumentParams,
  body: DocumentPatch,
  patch: true,
  response: KbDocument,
  errors: ['invalid_id', 'agent_not_found', 'not_found'],
  handler: ({ runtime, principal, account, params, body }) =>
    patchDocument(runtime.database, agentAccount(principal, account), params.agt, params.doc, body),
})
