// Keyset cursors: opaque compact JWS (HS256, key derived from SVC_SECRET) carrying the position of the
// last row and a hash of everything the page depended on. Any other filter set, sort, limit or credential
// makes the binding hash differ, and the cursor answers 400 invalid_cursor.
import { createHash } from 'node:crypto'
import { CompactSign, compactVerify } from 'jose'
import { Errors } from './errors'

export interface CursorBinding {
  /** Route identity, e.g. "GET /v1/users". */
  route: string
  filters: Record<string, unknown>
  sort: string
  limit: number
  credentialId: string
}

let keyCache: { secret: string; key: Uint8Array } | undefined
function keyFor(secret: string): Uint8Array {
  if (keyCache?.secret !== secret)
    keyCache = {
      secret,
      key: createHash('sha256')
        .update('svc-cursor-v1\0' + secret)
        .digest(),
    }
  return keyCache.key
}

/** Stable JSON: object keys sorted, so {a,b} and {b,a} bind the same way; arrays keep their order. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`
  }
  return JSON.stringify(value instanceof Date ? value.toISOString() : value)
}

const bindingHash = (b: CursorBinding) => createHash('sha256').update(canonical(b)).digest('base64url').slice(0, 22)

export async function encodeCursor(position: unknown[], binding: CursorBinding, secret: string): Promise<string> {
  const payload = new TextEncoder().encode(JSON.stringify({ v: 1, p: position, b: bindingHash(binding) }))
  return new CompactSign(payload).setProtectedHeader({ alg: 'HS256' }).sign(keyFor(secret))
}

export async function decodeCursor(cursor: string, binding: CursorBinding, secret: string): Promise<unknown[]> {
  let parsed: { v?: number; p?: unknown; b?: string }
  try {
    const { payload } = await compactVerify(cursor, keyFor(secret), { algorithms: ['HS256'] })
    parsed = JSON.parse(new TextDecoder().decode(payload))
  } catch {
    throw Errors.invalidCursor()
  }
  if (parsed.v !== 1 || !Array.isArray(parsed.p) || parsed.b !== bindingHash(binding)) throw Errors.invalidCursor()
  return parsed.p
}
