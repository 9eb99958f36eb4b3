// The issuer string and the two discovery documents. Every URL is built by concatenating onto one origin
// string (never through URL.href, which would append a slash to a bare origin): strict clients compare
// the PRM's authorization_servers[0], the metadata issuer and the `iss` response parameter byte for byte.
import { CONNECTION_SCOPES } from './guard'

/** The MCP endpoints this server is the resource server for; /mcp is canonical. */
export const RESOURCE_PATHS = ['/mcp', '/v1/mcp'] as const

export const resourceMetadataUrl = (origin: string, resourcePath: string = '/mcp') =>
  `${origin}/.well-known/oauth-protected-resource${resourcePath}`

export function protectedResourceMetadata(origin: string, resourcePath: string = '/mcp') {
  return {
    resource: `${origin}${resourcePath}`,
    authorization_servers: [origin],
    scopes_supported: [...CONNECTION_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Conversational Agent Service',
    resource_documentation: `${origin}/v1/docs`,
  }
}

export function authorizationServerMetadata(origin: string) {
  return {
    issuer: origin,
    authorization_endpoint: `${origin}/oauth/authorize`,
    token_endpoint: `${origin}/oauth/token`,
    registration_endpoint: `${origin}/oauth/register`,
    revocation_endpoint: `${origin}/oauth/revoke`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    scopes_supported: [...CONNECTION_SCOPES],
    authorization_response_iss_parameter_supported: true,
    // A URL client_id is a Client ID Metadata Document (client-document.ts); such clients are public
    // (`none` above). The SDK client switches from DCR to its clientMetadataUrl when this is true.
    client_id_metadata_document_supported: true,
    service_documentation: `${origin}/v1/docs`,
  }
}

/**
 * RFC 8707 resource → the canonical resource string, or null when it is not ours. Scheme and host are
 * compared case-insensitively and one trailing slash is tolerated (clients that round-trip through
 * URL.href add it); the bare origin and both MCP paths count as this resource server.
 */
export function canonicalResource(value: string | undefined, origin: string): string | null {
  if (value === undefined || value === '') return `${origin}/mcp`
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return null
  }
  if (url.hash || url.search || url.username || url.password) return null
  const base = new URL(origin)
  if (url.protocol !== base.protocol || url.host !== base.host) return null
  const path = url.pathname.replace(/\/$/, '')
  if (path === '') return origin
  return (RESOURCE_PATHS as readonly string[]).includes(path) ? `${origin}${path}` : null
}

/**
 * The RFC 6750 / RFC 9728 challenge for a protected MCP path: `resource_metadata` always, `error` only
 * when a credential was sent (RFC 6750 §3.1), every value quoted (the SDK client's parser needs quotes).
 */
export function bearerChallenge(
  origin: string,
  resourcePath: string = '/mcp',
  opts: { error?: 'invalid_token' | 'insufficient_scope'; description?: string; scope?: string } = {},
): string {
  const q = (s: string) => `"${s.replace(/["\\]/g, '')}"`
  const parts = [`resource_metadata=${q(resourceMetadataUrl(origin, resourcePath))}`]
  if (opts.scope) parts.push(`scope=${q(opts.scope)}`)
  if (opts.error) parts.push(`error=${q(opts.error)}`)
  if (opts.error && opts.description) parts.push(`error_description=${q(opts.description)}`)
  return `Bearer ${parts.join(', ')}`
}
