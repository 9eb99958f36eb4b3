// Route-agnostic first step: request id, no-store and the security headers on every response, then wait
// for boot.
import { defineEventHandler, getHeader, setResponseHeader } from 'h3'
import { chooseRequestId } from '~/http/request-id'
import { setSecurityHeaders } from '~/http/security-headers'
import { whenReady } from '~/kit/runtime'
import { observeRequest, UNMATCHED_ROUTE } from '~/kit/metrics'

export default defineEventHandler(async (event) => {
  // Counted when the response is written out (or the socket closes first), with the route template the router
  // matched by then: /api/v1 requests are re-dispatched, so they count under their /v1 template.
  const started = performance.now()
  const res = event.node.res
  let counted = false
  const count = () => {
    if (counted) return
    counted = true
    const route = (event.context.matchedRoute as { path?: string } | undefined)?.path ?? UNMATCHED_ROUTE
    observeRequest(event.method, route, res.statusCode, (performance.now() - started) / 1000)
  }
  res.once('finish', count)
  res.once('close', count)
  const id = chooseRequestId(getHeader(event, 'x-request-id'))
  event.context.requestId = id
  setResponseHeader(event, 'X-Request-Id', id)
  setResponseHeader(event, 'Cache-Control', 'no-store')
  setSecurityHeaders(event)
  await whenReady()
})
