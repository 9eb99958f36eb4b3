import { getHeader } from 'h3'
import { defineWidgetRoute } from '~/http/define-widget-route'
import { postWidgetMessage } from '~/domain/widget/conversations'
import { WidgetConversationParams, WidgetMessageAnswer, WidgetMessageBody } from '~/domain/widget/schemas'

export default defineWidgetRoute({
  summary: 'Send a widget message',
  description:
    "One turn of a widget conversation, as POST /conversations/{conv}/messages answers it (turn and turns, without usage). Needs the conversation's visitor token in X-Svc-Visitor-Token (403 invalid_visitor_token); a conversation of another agent is 404. One turn at a time (409 turn_in_progress); the daily chat_messages quota (429 quota_exceeded) and billing (402) apply.",
  params: WidgetConversationParams,
  body: WidgetMessageBody,
  response: WidgetMessageAnswer,
  errors: [
    'agent_paused',
    'invalid_id',
    'invalid_visitor_token',
    'not_found',
    'payment_required',
    'turn_in_progress',
    'conversation_ended',
    'quota_exceeded',
  ],
  handler: ({ event, runtime, agent, params, body }) =>
    postWidgetMessage(runtime, agent, params.conv, getHeader(event, 'x-svc-visitor-token'), body),
})
