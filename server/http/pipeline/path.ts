// The two paths of a request. The canonical one binds cursors and idempotency keys (the /api/v1 alias
// folded into /v1, so both spellings share them); the requested one is what audit rows show.
import type { H3Event } from 'h3'

export const canonicalPath = (event: H3Event): string => event.path.split('?')[0].replace(/^\/api\/v1\//, '/v1/')

/** As the client sent it (the /api/v1 alias rewrites event.path), never with the query string. */
export const requestedPath = (event: H3Event): string =>
  (event.node.req.originalUrl ?? event.node.req.url ?? event.path).split('?')[0]
