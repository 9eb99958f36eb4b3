// Binds a list request's cursor to its route, filters, sort, limit and credential (the HTTP side of keyset
// pagination; the domain sees only the KeysetRequest).
import type { H3Event } from 'h3'
import type { Principal } from '~/domain/credentials/principal'
import { decodeCursor, type CursorBinding } from '~/lib/cursor'
import type { KeysetRequest } from '~/lib/keyset'

export async function keysetRequest(opts: {
  event: H3Event
  principal: Principal
  filters: Record<string, unknown>
  sort: string
  limit: number
  cursor: string | undefined
  secret: string
}): Promise<KeysetRequest> {
  const binding: CursorBinding = {
    route: `${opts.event.method} ${opts.event.path.split('?')[0].replace(/^\/api\/v1\//, '/v1/')}`,
    filters: opts.filters,
    sort: opts.sort,
    limit: opts.limit,
    credentialId: opts.principal.credentialId,
  }
  const after = opts.cursor ? await decodeCursor(opts.cursor, binding, opts.secret) : null
  return { binding, secret: opts.secret, after }
}
