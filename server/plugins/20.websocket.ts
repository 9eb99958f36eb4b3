// WebSockets only where a route means them, with a bounded message size. With Nitro's WebSocket support on, crossws upgrades a request on
// any path (a route without WebSocket hooks resolves to empty hooks, which accept), so /v1/health or an
// unknown path would hold an idle socket open. This global upgrade hook refuses every path but the media
// streams; a route's own upgrade hook still decides for its path (crossws: the route's answer wins when it
// gives one, otherwise the global one applies).
import { defineNitroPlugin } from 'nitropack/runtime'
import { ENVIRONMENT } from '~/http/envelope'
import { chooseRequestId } from '~/http/request-id'
import { isDraining, sessionClosed, sessionOpened } from '~/kit/drain'
import { statusOf, type ErrorCode } from '~/lib/errors'

/** One message at most: a Media Streams frame is under 1 KB; ws would take 100 MiB by default. */
export const MAX_WS_MESSAGE_BYTES = 64 * 1024

/** Paths that carry WebSockets: provider media streams and browser voice chat. */
export const WEBSOCKET_PATHS = [/^\/telephony\/[a-z0-9_-]{1,32}\/media$/, /^\/v1\/widget\/voice$/]

/** The upgrade's answer while draining: the error envelope, 503 service_unavailable. */
function drainingRefusal(request: Request): Response {
  const request_id = chooseRequestId(request.headers.get('x-request-id') ?? undefined)
  const code = 'service_unavailable' satisfies ErrorCode
  const body = {
    error: { code, message: 'This instance is shutting down; connect again.', field: null, request_id },
    meta: { request_id, environment: ENVIRONMENT },
  }
  return new Response(JSON.stringify(body), {
    status: statusOf(code),
    headers: { 'content-type': 'application/json', 'x-request-id': request_id, 'retry-after': '1' },
  })
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
        if (isDraining()) return drainingRefusal(request)
      },
      // Live sessions are counted so that a SIGTERM waits for them (plugins/05.shutdown.ts).
      open(peer: unknown) {
        sessionOpened(peer)
      },
      close(peer: unknown) {
        sessionClosed(peer)
      },
    },
  }
})
