// The client address and scheme (decisions "Client IP"). X-Forwarded-For and X-Forwarded-Proto are only
// believed when the socket peer is a trusted proxy (SVC_TRUSTED_PROXIES, default loopback): anyone else
// could write them and so choose the IP that ip_allowlist, the failed-auth limit and the audit row see.
import { Socket } from 'node:net'
import type { H3Event } from 'h3'
import { loadConfig } from '~/config'
import { ipAllowed, ipLimitKey } from '~/lib/ip'

const unmapped = (ip: string) => (ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip)

const firstValue = (header: string | string[] | undefined) =>
  (Array.isArray(header) ? header[0] : header)?.split(',')[0]?.trim() || undefined

/**
 * True when the forwarding headers may be believed. A request without a network socket comes from inside
 * the process (the MCP connector replays tool calls through Nitro's localFetch, passing its caller's
 * address on): it has no peer to distrust. A real socket that has lost its address (the client already
 * hung up) is not trusted.
 */
export function fromTrustedProxy(event: H3Event): boolean {
  const known = event.context.fromTrustedProxy as boolean | undefined
  if (known !== undefined) return known
  const socket = event.node.req.socket
  if (!(socket instanceof Socket)) return true
  const trusted = loadConfig().trustedProxies
  // A keep-alive connection keeps its peer: decided once per socket (and per trusted list), not per request.
  const seen = socketTrust.get(socket)
  if (seen?.trusted === trusted) {
    event.context.fromTrustedProxy = seen.answer
    return seen.answer
  }
  const peer = socket.remoteAddress
  // ipAllowed treats an empty list as "everyone": an empty SVC_TRUSTED_PROXIES means nobody.
  const answer = !!peer && trusted.length > 0 && ipAllowed(peer, trusted)
  // A socket that has lost its address is not remembered: it is answered false and asked again.
  if (peer) socketTrust.set(socket, { trusted, answer })
  event.context.fromTrustedProxy = answer
  return answer
}
const socketTrust = new WeakMap<Socket, { trusted: readonly string[]; answer: boolean }>()

/** The first X-Forwarded-For hop from a trusted proxy, else the socket address. Computed once per request. */
export function clientIp(event: H3Event): string {
  const known = event.context.clientIp as string | undefined
  if (known) return known
  const forwarded = fromTrustedProxy(event) ? firstValue(event.node.req.headers['x-forwarded-for']) : undefined
  const ip = unmapped(forwarded || event.node.req.socket?.remoteAddress || 'unknown')
  event.context.clientIp = ip
  return ip
}

/** The client as per-IP limits count it: its address, or an IPv6 client's /64 (lib/ip.ts ipLimitKey). */
export const clientIpKey = (event: H3Event): string => ipLimitKey(clientIp(event))

/** Served over https: the public URL says so, the socket is TLS, or a trusted proxy's X-Forwarded-Proto. */
export function servedOverHttps(event: H3Event): boolean {
  if (loadConfig().publicUrl.startsWith('https:')) return true
  if ((event.node.req.socket as { encrypted?: boolean } | undefined)?.encrypted) return true
  return fromTrustedProxy(event) && firstValue(event.node.req.headers['x-forwarded-proto'])?.toLowerCase() === 'https'
}
