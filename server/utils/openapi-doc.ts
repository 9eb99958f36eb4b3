import { buildOpenApi } from '../domain/platform/openapi'
import { routeTable } from './route-table'
import { useRuntime } from './runtime'

let cached: Promise<ReturnType<typeof buildOpenApi>> | undefined

/** Built once per process from the route table; routes cannot change while it runs. */
export function openApiDocument() {
  cached ??= routeTable().then((entries) => buildOpenApi(entries, useRuntime().config.publicUrl))
  return cached
}
