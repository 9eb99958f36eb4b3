// CORS preflights of the public widget API (/v1/widget/*, also under /api/v1): answered only for an
// Origin that an agent with a live widget token lists in allowed_domains (a preflight carries no token
// to name the agent; each request is then checked against its own agent, define-widget-route.ts).
// Any other Origin, or none, is 403 origin_not_allowed without CORS headers. A preflight first spends a
// point of the per-IP limit (widget_ip), so a stranger cannot drive the query below faster than the
// widget requests themselves; its 429 has no CORS headers (a browser fails any non-2xx preflight
// alike). The rest of the REST API answers no preflight at all.
import { defineEventHandler, getHeader, setResponseHeader, setResponseStatus } from 'h3'
import { allowOrigin, WIDGET_ALLOW_HEADERS, widgetIpLimit } from '~/http/define-widget-route'
import { originNotAllowed, someAgentAllows } from '~/domain/widget/access'
import { useRuntime } from '~/kit/runtime'

const WIDGET_PATH = /^(\/api)?\/v1\/widget(\/|$)/

export default defineEventHandler(async (event) => {
  if (event.method !== 'OPTIONS' || !WIDGET_PATH.test(event.path.split('?')[0])) return
  const runtime = useRuntime()
  await widgetIpLimit(event, runtime)
  const origin = getHeader(event, 'origin')
  if (!origin || !(await someAgentAllows(runtime.database, origin))) throw originNotAllowed()
  allowOrigin(event, origin)
  setResponseHeader(event, 'Access-Control-Allow-Methods', 'GET, POST, OPTIONS')
  setResponseHeader(event, 'Access-Control-Allow-Headers', WIDGET_ALLOW_HEADERS)
  setResponseHeader(event, 'Access-Control-Max-Age', 600)
  setResponseStatus(event, 204)
  return ''
})
