import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { ChatConversationOut, ConversationParams, EndBody } from '~/domain/conversations/chat-schemas'
import { endConversation } from '~/domain/conversations/end'

export default defineApiRoute({
  summary: 'End a conversation',
  description:
    'Sets status completed and ended_at, emits conversation.ended and starts the summary (summary_status pending, then ready with summary.ready). Ending again answers 200 with the conversation and emits nothing.',
  tags: ['Conversations'],
  scope: 'conversations:write',
  dataRoute: true,
  params: ConversationParams,
  body: EndBody,
  response: ChatConversationOut,
  errors: ['invalid_id', 'not_found', 'conversation_deleted'],
  handler: ({ runtime, principal, account, params }) =>
    endConversation(runtime, agentAccount(principal, account), params.conv),
})
