// WebSockets only where a route means them, with a bounded message size. With Nitro's WebSocket support on, crossws upgrades a request on
// any path (a route without WebSocket hooks resolves to empty hooks, which accept), so /v1/health or an
// unknown path would hold an idle socket open. This global upgrade hook refuses every path but the media
// streams; a route's own upgrade hook still decides for its path (crossws: the route's answer wins when it
// gives one, otherwise the global one applies). It also bounds sockets that have not started a stream
// (http/media-sockets.ts): 429 rate_limited for a client already holding MAX_UNSTARTED_PER_IP, and every
// socket it opens is closed unless its stream starts within 2 s (a voice chat's 2 s begin at `ready`).
import { ServerResponse, type IncomingMessage } from 'node:http'
import type { Peer } from 'crossws'
import { createEvent } from 'h3'
import { defineNitroPlugin } from 'nitropack/runtime'
import { clientIpKey } from '~/http/client-ip'
import { ENVIRONMENT } from '~/http/envelope'
import { MAX_UNSTARTED_PER_IP, socketGone, unstartedFrom, watchStart } from '~/http/media-sockets'
import { chooseRequestId } from '~/http/request-id'
import { isDraining, sessionClosed, sessionOpened } from '~/kit/drain'
import { statusOf, type ErrorCode } from '~/lib/errors'

/** One message at most: a Media Streams frame is under 1 KB; ws would take 100 MiB by default. */
export const MAX_WS_MESSAGE_BYTES = 64 * 1024

/** Paths that carry WebSockets: provider media streams and browser voice chat. */
export const WEBSOCKET_PATHS = [/^\/telephony\/[a-z0-9_-]{1,32}\/media$/, /^\/v1\/widget\/voice$/]

/** An upgrade's refusal in the error envelope, with Retry-After. */
function refusal(request: Request, code: ErrorCode, message: string, retryAfterS: number): Response {
  const request_id = chooseRequestId(request.headers.get('x-request-id') ?? undefined)
  const body = {
    error: { code, message, field: null, request_id },
    meta: { request_id, environment: ENVIRONMENT },
  }
  return new Response(JSON.stringify(body), {
    status: statusOf(code),
    headers: { 'content-type': 'application/json', 'x-request-id': request_id, 'retry-after': String(retryAfterS) },
  })
}

/** The voice chat's 2 s begin when it is told to stream (`ready`), not while its conversation is opened. */
const VOICE_CHAT_PATH = /^\/v1\/widget\/voice$/

/** The client of an upgrade as per-IP limits count it (the upgrade bypasses the middleware: no h3 event). */
function upgradeIp(request: Request): string {
  const nodeReq = (request as unknown as { _req?: IncomingMessage })._req
  if (!nodeReq) return 'unknown'
  return clientIpKey(createEvent(nodeReq, new ServerResponse(nodeReq)))
}

export default defineNitroPlugin((nitroApp) => {
  // h3 builds the crossws options from app.options.websocket on first use, which is after the plugins run.
  const options = nitroApp.h3App.options as {
    websocket?: { hooks?: Record<string, unknown>; serverOptions?: Record<string, unknown> }
  }
  options.websocket = {
    ...options.websocket,
    serverOptions: { ...options.websocket?.serverOptions, maxPayload: MAX_WS_MESSAGE_BYTES },
    hooks: {
      ...options.websocket?.hooks,
      upgrade(request: Request) {
        const path = new URL(request.url, 'http://localhost').pathname
        if (!WEBSOCKET_PATHS.some((re) => re.test(path))) return new Response('Not Found', { status: 404 })
        // A draining process takes no new session; the client reconnects through the balancer elsewhere.
        if (isDraining())
          return refusal(request, 'service_unavailable', 'This instance is shutting down; connect again.', 1)
        const ip = upgradeIp(request)
        if (unstartedFrom(ip) >= MAX_UNSTARTED_PER_IP)
          return refusal(request, 'rate_limited', 'Too many media sockets without a stream from this address.', 2)
        ;(request as unknown as { context: Record<string, unknown> }).context.mediaIp = ip
      },
      // Live sessions are counted so that a SIGTERM waits for them (plugins/05.shutdown.ts).
      open(peer: Peer) {
        sessionOpened(peer)
        const ip = typeof peer.context?.mediaIp === 'string' ? peer.context.mediaIp : 'unknown'
        const path = new URL(peer.request?.url ?? '/', 'http://localhost').pathname
        // Between the upgrade's check and here other sockets of the client may have opened: the cap holds.
        if (!watchStart(peer, ip, !VOICE_CHAT_PATH.test(path))) {
          // The route's own open hook runs next: it opens nothing for a socket refused here.
          if (peer.context) peer.context.mediaRefused = true
          peer.close(1013, 'too many media sockets without a stream from this address')
        }
      },
      close(peer: Peer) {
        socketGone(peer)
        sessionClosed(peer)
      },
    },
  }
})
