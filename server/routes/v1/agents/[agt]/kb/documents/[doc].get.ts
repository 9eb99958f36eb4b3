import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { DocumentParams, KbDocument } from '~/domain/kb/document-schemas'
import { getDocument } from '~/domain/kb/documents'

export default defineApiRoute({
  summary: 'One knowledge document',
  description: "The document with its extracted text (the list leaves text out). Another account's document is 404.",
  tags: ['Knowledge base'],
  scope: 'kb:read',
  dataRoute: true,
  params: DocumentParams,
  response: KbDocument,
  errors: ['invalid_id', 'agent_not_found', 'not_found'],
  handler: ({ runtime, principal, account, params }) =>
    getDocument(runtime.database, agentAccount(principal, account), params.agt, params.doc),
})
