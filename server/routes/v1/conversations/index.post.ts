import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { ChatConversationOut, CreateConversationBody } from '~/domain/conversations/chat-schemas'
import { createConversation } from '~/domain/conversations/create'

export default defineApiRoute({
  summary: 'Start a conversation (chat via API)',
  description:
    'Creates a conv_p conversation on channel api with a server-minted session_id (api_ + ULID). identity, custom and external_session_id are applied before the optional greeting (turn 0). agent_version, prompt_version and model are stamped and never change. A balance check runs first (402 payment_required).',
  tags: ['Conversations'],
  scope: 'conversations:write',
  dataRoute: true,
  body: CreateConversationBody,
  status: 201,
  response: ChatConversationOut,
  errors: [
    'agent_paused',
    'invalid_id',
    'unsupported_field',
    'invalid_type',
    'invalid_email',
    'invalid_phone',
    'payment_required',
    'agent_not_found',
  ],
  handler: ({ runtime, principal, account, body }) =>
    createConversation(runtime, agentAccount(principal, account), body),
})
