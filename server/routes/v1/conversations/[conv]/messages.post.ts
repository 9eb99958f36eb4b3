import { setResponseHeader } from 'h3'
import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { ConversationParams, MessageBody, MessageOut } from '~/domain/conversations/chat-schemas'
import { postMessage } from '~/domain/conversations/messages'

export default defineApiRoute({
  summary: 'Send a chat message',
  description:
    'One non-streaming turn: the visitor message, any tool the engine called (tool turns), and the agent answer. One turn at a time per conversation (409 turn_in_progress). With idempotency_key: the same text again answers the stored response with Idempotent-Replayed: true (no new turn, no new bill); another text is 409 idempotency_key_reused. Keys live 24 hours. Billing checks the balance (402) and the daily chat_messages quota (429 quota_exceeded).',
  tags: ['Conversations'],
  scope: 'conversations:write',
  rateClass: 'chat',
  dataRoute: true,
  params: ConversationParams,
  body: MessageBody,
  response: MessageOut,
  errors: [
    'agent_paused',
    'invalid_id',
    'not_found',
    'conversation_deleted',
    'payment_required',
    'turn_in_progress',
    'conversation_ended',
    'idempotency_key_reused',
    'quota_exceeded',
  ],
  handler: async ({ event, runtime, principal, account, params, body }) => {
    const answer = await postMessage(runtime, agentAccount(principal, account), params.conv, body)
    if (answer.replayed) setResponseHeader(event, 'Idempotent-Replayed', 'true')
    return answer.response
  },
})
