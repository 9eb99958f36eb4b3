import { defineWidgetRoute } from '~/http/define-widget-route'
import { recordWidgetEvent } from '~/domain/widget/events'
import { WidgetEventBody } from '~/domain/widget/schemas'

export default defineWidgetRoute({
  summary: 'Report a widget event',
  description:
    'A browser-side event of the widget: widget.loaded, widget.opened, widget.closed, message.shown or link.clicked. Counted per agent, UTC day and type (GET /metrics `widget_events`); `data` is an object of at most 2 KB of JSON, checked and not stored. A `conversation_id` must be a widget conversation of this agent (else 404). Answers 204.',
  body: WidgetEventBody,
  status: 204,
  errors: ['invalid_id', 'not_found'],
  handler: async ({ runtime, agent, body }) => {
    await recordWidgetEvent(runtime.database, agent, body)
  },
})
