import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { ChatConversationOut, ConversationParams, IdentifyBody } from '~/domain/conversations/chat-schemas'
import { identifyConversation } from '~/domain/conversations/identify'

export default defineApiRoute({
  summary: 'Identify the visitor',
  description:
    'Server-side visitor identification: merges identity into the conversation key by key (null removes a key). Values are strings (invalid_type otherwise); email must be an address (invalid_email), phone_e164 E.164 (invalid_phone).',
  tags: ['Conversations'],
  scope: 'conversations:write',
  dataRoute: true,
  params: ConversationParams,
  body: IdentifyBody,
  response: ChatConversationOut,
  errors: ['invalid_id', 'not_found', 'conversation_deleted', 'invalid_type', 'invalid_email', 'invalid_phone'],
  handler: ({ runtime, principal, account, params, body }) =>
    identifyConversation(runtime.database, agentAccount(principal, account), params.conv, body.identity),
})
