// Binds a list request's cursor to its route, filters, sort, limit and credential (the HTTP side of keyset
// pagination; the domain sees only the KeysetRequest). Route factories hand it to handlers as `keyset`.
import type { H3Event } from 'h3'
import type { Principal } from '~/domain/credentials/principal'
import { decodeCursor, type CursorBinding } from '~/lib/cursor'
import { canonicalPath } from './pipeline/path'
import type { BindKeyset } from './route-meta'

export function bindKeyset(event: H3Event, principal: Principal | null, secret: string): BindKeyset {
  return async ({ filters, sort, limit, cursor }) => {
    if (!principal) throw new Error('keyset pagination needs an authenticated route')
    const binding: CursorBinding = {
      route: `${event.method} ${canonicalPath(event)}`,
      filters,
      sort,
      limit,
      credentialId: principal.credentialId,
    }
    const after = cursor ? await decodeCursor(cursor, binding, secret) : null
    return { binding, secret, after }
  }
}
