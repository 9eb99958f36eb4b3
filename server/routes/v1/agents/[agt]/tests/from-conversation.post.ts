import { defineApiRoute } from '~/http/define-api-route'
import { agentAccount } from '~/domain/agents/agents'
import { AgentParams } from '~/domain/agents/schemas'
import { testFromConversation } from '~/domain/agent-tests/tests'
import { AgentTest, FromConversationBody } from '~/domain/agent-tests/schemas'

export default defineApiRoute({
  summary: 'Make a test from a conversation',
  description:
    'Body {conversation_id}: a conversation of this agent. Answers 201 with a new test named "From <conversation_id>" whose turns ' +
    "are the conversation's visitor turns (the first 20) with no assertions, and whose reference_answers are the agent's " +
    'answers to them; the surface follows the channel (phone calls → phone, voice chat → voice_chat, else chat). Reading ' +
    "the transcript needs conversations:read as well (else 403 insufficient_scope); the account's default_redaction masks " +
    'the copied text. A conversation of another agent, or without visitor turns, is 400 validation_error (conversation_id).',
  tags: ['Agent tests'],
  scope: 'agents:write',
  dataRoute: true,
  status: 201,
  params: AgentParams,
  body: FromConversationBody,
  response: AgentTest,
  errors: [
    'invalid_id',
    'agent_not_found',
    'not_found',
    'conversation_deleted',
    'unsupported_field',
    'validation_error',
    'plan_limit_reached',
  ],
  handler: ({ runtime, principal, account, params, body }) =>
    testFromConversation(runtime, principal, agentAccount(principal, account), params.agt, body.conversation_id),
})
