// The origin this server is reached at, as issuer and resource URLs need it (see domain/oauth/metadata.ts).
import type { H3Event } from 'h3'
import type { Config } from '~/config'

/**
 * The public origin without a trailing slash: SVC_PUBLIC_URL, else http://HOST:PORT where a PORT of 0
 * (an ephemeral port, as in the tests) is completed from the socket the request arrived on.
 */
export function publicOrigin(event: H3Event, config: Config): string {
  if (config.publicUrlExplicit || config.port !== 0) return config.publicUrl
  const port = event.node.req.socket?.localPort
  // A request from inside the process (the MCP connector's localFetch) has no socket to ask.
  if (!port) return config.publicUrl
  const host = config.host.includes(':') ? `[${config.host}]` : config.host
  return `http://${host}:${port}`
}
