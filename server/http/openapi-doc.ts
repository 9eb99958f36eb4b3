import type { H3Event } from 'h3'
import { buildOpenApi } from './openapi'
import { publicOrigin } from '~/http/public-origin'
import { routeTable } from './route-table'
import { useRuntime } from '~/kit/runtime'

let cached: Promise<ReturnType<typeof buildOpenApi>> | undefined

/**
 * Built once per process from the route table; routes cannot change while it runs. The event only
 * completes an ephemeral port (PORT=0) in the servers list, and that port is fixed for the process.
 */
export function openApiDocument(event: H3Event) {
  cached ??= routeTable().then((entries) => buildOpenApi(entries, publicOrigin(event, useRuntime().config)))
  return cached
}
