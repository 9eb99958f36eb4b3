import { defineWidgetRoute } from '~/http/define-widget-route'
import { widgetConfig } from '~/domain/widget/conversations'
import { WidgetConfig } from '~/domain/widget/schemas'

export default defineWidgetRoute({
  summary: 'Read the widget settings',
  description:
    "Called by the widget script on load, before it shows anything: the agent's appearance (every key, null when unset, as GET /agents/{agt}/widget presents it) and the greeting a new conversation starts with. The script mounts its launcher only when this answers 200, so a page whose Origin is not allowed (or a replaced token) shows no widget.",
  response: WidgetConfig,
  handler: ({ agent }) => widgetConfig(agent),
})
