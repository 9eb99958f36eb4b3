import { randomBytes } from 'node:crypto'

// Printable ASCII only (0x21–0x7e, no spaces or controls), at most 64 characters; anything else is replaced.
const CLIENT_ID = /^[\x21-\x7e]{1,64}$/

export function chooseRequestId(client: string | undefined): string {
  return client && CLIENT_ID.test(client) ? client : mintRequestId()
}

export const mintRequestId = () => 'req_' + randomBytes(12).toString('base64url')
