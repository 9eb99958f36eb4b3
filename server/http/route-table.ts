// The route table Nitro generated from server/routes (internal virtual module; nitropack is pinned to
// 2.13.x for this reason). Lazy route modules are imported once to read what defineApiRoute attached.
// @ts-expect-error internal virtual module without types
import { handlers } from '#nitro-internal-virtual/server-handlers'
import type { ApiRouteMeta } from './route-meta'

interface NitroHandler {
  route: string
  method?: string
  middleware: boolean
  lazy: boolean
  handler: any
}

export interface RouteEntry {
  path: string
  method: string
  meta: ApiRouteMeta | null
}

const routes = (handlers as NitroHandler[]).filter((h) => !h.middleware && h.route)

/** The base-path alias re-dispatches to /v1, and /v1/oauth/* to /oauth/*: not operations of their own. */
export const isAlias = (route: string) => route.startsWith('/api/v1/') || route.startsWith('/v1/oauth/')

let cache: Promise<RouteEntry[]> | undefined

export function routeTable(): Promise<RouteEntry[]> {
  cache ??= Promise.all(
    routes
      .filter((h) => !isAlias(h.route))
      .map(async (h) => {
        let fn = h.handler
        if (h.lazy) {
          const mod = await h.handler()
          fn = mod?.default ?? mod
        }
        return { path: h.route, method: (h.method ?? 'all').toUpperCase(), meta: (fn?.__api as ApiRouteMeta) ?? null }
      }),
  )
  return cache
}

const patternCache = new Map<string, RegExp>()
function toRegExp(route: string): RegExp {
  let re = patternCache.get(route)
  if (!re) {
    const body = route
      .split('/')
      .map((seg) =>
        seg.startsWith('**') ? '.*' : seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      )
      .join('/')
    re = new RegExp(`^${body}/?$`)
    patternCache.set(route, re)
  }
  return re
}

/** Methods served on a concrete path, for the Allow header of a 405. */
export function allowedMethods(path: string): string[] {
  const clean = path.split('?')[0].replace(/^\/api\/v1\//, '/v1/')
  const methods = routes
    .filter((h) => !isAlias(h.route) && toRegExp(h.route).test(clean))
    .map((h) => (h.method ?? 'all').toUpperCase())
  return [...new Set(methods)].sort()
}
