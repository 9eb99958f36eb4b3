import { defineWidgetRoute } from '~/http/define-widget-route'
import { startWidgetConversation } from '~/domain/widget/conversations'
import { WidgetConversation, WidgetConversationBody } from '~/domain/widget/schemas'

export default defineWidgetRoute({
  summary: 'Start a widget conversation',
  description:
    "Called by the widget script from a visitor's browser. A chat conversation on channel `widget` (conv_p<n>, the agent's chat prompt and tools) with its greeting stored as turn 0 (greetings[chat][language] when the browser's `language` has one; after_hours_message outside business hours). `visitor_token` is shown only here: send it as X-Svc-Visitor-Token with each message. Billing applies (402 payment_required). Each agent takes at most widget_conversations_per_day new widget conversations per UTC day (operator config, default 2,000), then 429 quota_exceeded with Retry-After.",
  body: WidgetConversationBody,
  status: 201,
  // The answer holds the visitor token: an Idempotency-Key replay copy is stored only sealed.
  secretResponse: true,
  response: WidgetConversation,
  errors: ['agent_paused', 'payment_required', 'quota_exceeded'],
  handler: ({ runtime, agent, body }) => startWidgetConversation(runtime, agent, body),
})
