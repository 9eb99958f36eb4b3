// Route-agnostic first step: request id, no-store and the security headers on every response, then wait
// for boot.
import { defineEventHandler, getHeader, setResponseHeader } from 'h3'
import { chooseRequestId } from '~/http/request-id'
import { setSecurityHeaders } from '~/http/security-headers'
import { whenReady } from '~/kit/runtime'

export default defineEventHandler(async (event) => {
  const id = chooseRequestId(getHeader(event, 'x-request-id'))
  event.context.requestId = id
  setResponseHeader(event, 'X-Request-Id', id)
  setResponseHeader(event, 'Cache-Control', 'no-store')
  setSecurityHeaders(event)
  await whenReady()
})
