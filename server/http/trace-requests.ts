// The server span of every request (decisions "Tracing"). h3 middleware cannot run the rest of a request
// inside a context, so the app's handler itself is wrapped, the way Nitro wraps it for its async context:
// every route, middleware and error answer runs inside the span. The span ends when the response closes,
// named `METHOD <route template>` from the router's match (never the raw path, never the query string).
import type { App } from 'h3'
import { serverSpan } from '~/kit/tracing'

export function traceRequests(app: App) {
  const inner = app.handler
  app.handler = (event) => {
    const span = serverSpan(event.method, event.node.req.headers)
    event.node.res.once('close', () => span.end(event.context.matchedRoute?.path, event.node.res.statusCode))
    return span.run(() => inner(event))
  }
}
