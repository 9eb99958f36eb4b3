// Keyset cursors: opaque compact JWS (HS256, key derived from SVC_SECRET) carrying the position of the
// last row and a hash of everything the page depended on. Any other filter set, sort, limit or credential
// makes the binding hash differ, and the cursor answers 400 invalid_cursor.
// Signed and checked with node:crypto's HMAC, synchronously: the same compact JWS that jose made (jose's
// WebCrypto HMAC imported the key and ran an async job per cursor, about a tenth of a list request's CPU).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { Errors } from './errors'

/** base64url of {"alg":"HS256"}: the only header a cursor has. */
const HEADER = Buffer.from('{"alg":"HS256"}').toString('base64url')

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

const signatureOf = (signingInput: string, secret: string) =>
  createHmac('sha256', keyFor(secret)).update(signingInput).digest()

export async function encodeCursor(position: unknown[], binding: CursorBinding, secret: string): Promise<string> {
  const payload = Buffer.from(JSON.stringify({ v: 1, p: position, b: bindingHash(binding) })).toString('base64url')
  const input = `${HEADER}.${payload}`
  return `${input}.${signatureOf(input, secret).toString('base64url')}`
}

/** The payload of a cursor this service signed, or null. */
function verified(cursor: string, secret: string): Buffer | null {
  const parts = cursor.split('.')
  if (parts.length !== 3 || parts[0] !== HEADER) return null
  // The signature's text itself is compared, so no other spelling of it passes.
  const given = Buffer.from(parts[2])
  const expected = Buffer.from(signatureOf(`${parts[0]}.${parts[1]}`, secret).toString('base64url'))
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null
  return Buffer.from(parts[1], 'base64url')
}

export async function decodeCursor(cursor: string, binding: CursorBinding, secret: string): Promise<unknown[]> {
  let parsed: { v?: number; p?: unknown; b?: string }
  try {
    const payload = verified(cursor, secret)
    if (!payload) throw Errors.invalidCursor()
    parsed = JSON.parse(payload.toString('utf8'))
  } catch {
    throw Errors.invalidCursor()
  }
  if (parsed.v !== 1 || !Array.isArray(parsed.p) || parsed.b !== bindingHash(binding)) throw Errors.invalidCursor()
  return parsed.p
}
