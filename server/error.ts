// The one error handler: ApiError | H3Error (router 404/405, h3 internals) | anything else → the error
// envelope. It always sends (pitfall 3), and re-sets X-Request-Id, no-store and the security headers
// because Nitro's error path skips the response hooks.
import type { NitroErrorHandler } from 'nitropack/types'
import { getRequestURL, send, setResponseHeader, setResponseStatus, type H3Error } from 'h3'
import { toApiError } from '~/lib/errors'
import { allowedMethods } from '~/http/route-table'
import { errorBody } from '~/http/envelope'
import { mintRequestId } from '~/http/request-id'
import { setSecurityHeaders } from '~/http/security-headers'
import { isMcpPath } from '~/http/mcp/jsonrpc'

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
}

const handler: NitroErrorHandler = (error, event) => {
  const api = toApiError(error, () => allowedMethods(event.path))
  if (!event.context.requestId) event.context.requestId = mintRequestId()
  // Read by the audit row written when the response finishes.
  event.context.errorCode = api.code
  if (api.status >= 500) {
    const original = (error as H3Error).cause ?? error
    console.error(
      `[error] ${event.context.requestId} ${event.method} ${getRequestURL(event).pathname}:`,
      original instanceof Error ? original.stack : original,
    )
  }
  // A generic reason phrase: h3's own ("Cannot find any route matching /path") would echo the path.
  setResponseStatus(event, api.status, REASONS[api.status] ?? 'Error')
  setResponseHeader(event, 'X-Request-Id', event.context.requestId)
  setResponseHeader(event, 'Cache-Control', 'no-store')
  setSecurityHeaders(event)
  for (const [k, v] of Object.entries(api.headers)) setResponseHeader(event, k, v)
  setResponseHeader(event, 'Content-Type', 'application/json')
  // The MCP connector answers JSON-RPC, also when middleware refuses first (413) or something breaks.
  if (isMcpPath(event.path))
    return send(
      event,
      JSON.stringify({
        jsonrpc: '2.0',
        error: { code: -32000, message: api.message, data: { code: api.code, request_id: event.context.requestId } },
        id: null,
      }),
    )
  return send(event, JSON.stringify(errorBody(event, api.code, api.message, api.field)))
}

export default handler
