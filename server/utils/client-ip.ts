import type { H3Event } from 'h3'

/** The first hop of X-Forwarded-For (decisions: deploy behind a proxy that sets it), else the socket address. */
export function clientIp(event: H3Event): string {
  const xff = event.node.req.headers['x-forwarded-for']
  const first = (Array.isArray(xff) ? xff[0] : xff)?.split(',')[0]?.trim()
  const ip = first || event.node.req.socket?.remoteAddress || 'unknown'
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip
}
