// Browser MCP clients (Inspector web, Claude's web connector) call the discovery documents, the OAuth
// endpoints and /mcp cross-origin. Those paths answer preflights and expose the MCP and challenge
// headers on every response, errors included (a browser client that cannot read WWW-Authenticate never
// starts OAuth). The REST API stays closed to arbitrary origins. On /mcp a foreign Origin is 403 (MCP
// transport security: DNS-rebinding protection). Runs after 01 (request id, boot) and 02 (body cap):
// OPTIONS carries no body, so 02 never touches a preflight.
import { defineEventHandler, getHeader, setResponseHeader, setResponseStatus, type H3Event } from 'h3'
import { apiError } from '~/lib/errors'
import { useRuntime } from '~/kit/runtime'
import { publicOrigin } from '~/http/public-origin'
import { isMcpPath } from '~/http/mcp/jsonrpc'

const ALLOW_HEADERS =
  'authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id, mcp-method, mcp-name'
const EXPOSE_HEADERS = 'www-authenticate, mcp-session-id, mcp-protocol-version'
const LOOPBACK_ORIGIN = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/
const FIXED_ORIGINS = ['https://claude.ai']

type Area = 'discovery' | 'oauth' | 'mcp'

function areaOf(path: string): Area | null {
  const p = path.split('?')[0].replace(/\/$/, '')
  if (p.startsWith('/.well-known/')) return 'discovery'
  if (/^(\/v1)?\/oauth\/(register|token|revoke)$/.test(p)) return 'oauth'
  if (isMcpPath(p)) return 'mcp'
  return null
}

/** The service's own origin, loopback (any port), https://claude.ai and SVC_MCP_ALLOWED_ORIGINS. */
export function mcpOriginAllowed(event: H3Event, origin: string): boolean {
  const config = useRuntime().config
  return (
    origin === publicOrigin(event, config) ||
    LOOPBACK_ORIGIN.test(origin) ||
    FIXED_ORIGINS.includes(origin) ||
    config.mcpAllowedOrigins.includes(origin)
  )
}

export default defineEventHandler((event) => {
  const area = areaOf(event.path)
  if (!area) return
  const origin = getHeader(event, 'origin')
  if (area === 'mcp' && origin && !mcpOriginAllowed(event, origin)) {
    throw apiError('forbidden_origin', 'This Origin may not call the MCP endpoint.')
  }
  // Bearer tokens, never cookies: a wildcard is safe on the open documents and OAuth endpoints; /mcp
  // echoes the admitted origin.
  setResponseHeader(event, 'Access-Control-Allow-Origin', area === 'mcp' && origin ? origin : '*')
  if (area === 'mcp') setResponseHeader(event, 'Vary', 'Origin')
  setResponseHeader(event, 'Access-Control-Expose-Headers', EXPOSE_HEADERS)
  if (event.method === 'OPTIONS') {
    setResponseHeader(
      event,
      'Access-Control-Allow-Methods',
      area === 'discovery' ? 'GET, OPTIONS' : area === 'oauth' ? 'POST, OPTIONS' : 'GET, POST, DELETE, OPTIONS',
    )
    setResponseHeader(event, 'Access-Control-Allow-Headers', ALLOW_HEADERS)
    setResponseHeader(event, 'Access-Control-Max-Age', 600)
    setResponseStatus(event, 204)
    return ''
  }
})
