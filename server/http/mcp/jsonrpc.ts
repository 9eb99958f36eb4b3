// The connector's HTTP-level answers, kept apart from the SDK so middleware 04 loads nothing heavy.
import { setResponseHeader, setResponseStatus, type H3Event } from 'h3'

/** A JSON-RPC error answer outside any request (auth, method): id null, our error code in data. */
export function jsonRpcError(event: H3Event, status: number, message: string, data?: Record<string, unknown>) {
  setResponseStatus(event, status)
  setResponseHeader(event, 'Content-Type', 'application/json')
  return { jsonrpc: '2.0', error: { code: -32000, message, ...(data ? { data } : {}) }, id: null }
}

const MCP_PATHS = new Set(['/mcp', '/v1/mcp', '/api/v1/mcp'])

/** Whether a request path is the connector (h3 also matches a trailing slash). */
export function isMcpPath(path: string): boolean {
  const q = path.indexOf('?')
  let end = q < 0 ? path.length : q
  // Trailing slashes trimmed by hand: /\/+$/ retried from every slash of a long run, quadratic in a path
  // that every request's middleware checks (decisions "Hostile input").
  while (end > 0 && path.charCodeAt(end - 1) === 47) end--
  return MCP_PATHS.has(path.slice(0, end))
}
