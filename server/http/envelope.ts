// The contract's three envelopes. meta.environment is "production" on every response, errors included.
import type { H3Event } from 'h3'
import type { Page } from '~/lib/keyset'

export const ENVIRONMENT = 'production'

export const requestIdOf = (event: H3Event): string => event.context.requestId as string

export function meta(event: H3Event, extra: Record<string, unknown> = {}) {
  return { request_id: requestIdOf(event), environment: ENVIRONMENT, ...extra }
}

export function single<T extends object>(event: H3Event, object: T, extraMeta: Record<string, unknown> = {}) {
  return { ...object, meta: meta(event, extraMeta) }
}

export function list<T>(event: H3Event, page: Page<T>) {
  return {
    data: page.data,
    pagination: { limit: page.limit, has_more: page.hasMore, next_cursor: page.nextCursor },
    meta: meta(event, page.meta),
  }
}

export function errorBody(event: H3Event, code: string, message: string, field: string | null) {
  const request_id = requestIdOf(event)
  return { error: { code, message, field, request_id }, meta: { request_id, environment: ENVIRONMENT } }
}
