// The MCP connector takes POST only (stateless: no SSE stream to GET, no session to DELETE). Answered
// here, before the router would render the REST envelope and before the SDK transport, which in
// stateless mode would open a stream for GET. CORS preflights are answered earlier (03.cors).
import { defineEventHandler, setResponseHeader } from 'h3'
import { isMcpPath, jsonRpcError } from '~/http/mcp/jsonrpc'

export default defineEventHandler((event) => {
  if (event.method === 'POST' || !isMcpPath(event.path)) return
  setResponseHeader(event, 'Allow', 'POST')
  return jsonRpcError(event, 405, 'Method not allowed: the MCP connector takes POST only.')
})
