import { randomBytes } from 'node:crypto'

// Printable ASCII only (0x21–0x7e, no spaces or controls), at most 64 characters; anything else is replaced.
const CLIENT_ID = /^[\x21-\x7e]{1,64}$/

export function chooseRequestId(client: string | undefined): string {
  return client && CLIENT_ID.test(client) ? client : mintRequestId()
}

// 12 random bytes per id, taken from a pool filled 4 KB at a time: one call into the CSPRNG per 341 ids
// instead of one per request.
const POOL_BYTES = 12 * 341
let pool = randomBytes(POOL_BYTES)
let offset = 0

export const mintRequestId = () => {
  if (offset + 12 > pool.length) {
    pool = randomBytes(POOL_BYTES)
    offset = 0
  }
  offset += 12
  return `req_${pool.toString('base64url', offset - 12, offset)}`
}
