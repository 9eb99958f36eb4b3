import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { ImportBody } from '~/domain/conversations/schemas'
import { ChatConversationOut } from '~/domain/conversations/chat-schemas'
import { importConversation } from '~/domain/conversations/import'

export default defineApiRoute({
  summary: 'Import a call from an external voice stack',
  description:
    'Creates a completed conv_u conversation (summary_status ready) from a call handled elsewhere, with its summary and optional transcript. ' +
    'agent_version, prompt_version and model are stamped from the agent at import time. Imported calls feed the inbound phone history block. ' +
    'Fires conversation.ended. Answers 201 with the conversation as GET /conversations/{conv} shows it.',
  tags: ['Conversations'],
  scope: 'conversations:write',
  dataRoute: true,
  body: ImportBody,
  status: 201,
  response: ChatConversationOut,
  errors: [
    'invalid_id',
    'invalid_date',
    'invalid_date_range',
    'invalid_phone',
    'invalid_email',
    'invalid_type',
    'agent_not_found',
  ],
  handler: ({ runtime, principal, account, body }) =>
    importConversation(runtime, agentAccount(principal, account), body),
})
