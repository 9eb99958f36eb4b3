// Opaque bearer secrets (personal keys, dashboard sessions and login links, OAuth codes, tokens and client
// secrets, webhook signing secrets): a readable prefix plus 32 random bytes in unpadded base64url. Only
// the SHA-256 (hex) is stored and looked up; a malformed token is refused before any lookup.
import { createHash, randomBytes } from 'node:crypto'

const RANDOM_CHARS = 43 // 32 bytes in base64url, unpadded

export const mintToken = (prefix: string) => prefix + randomBytes(32).toString('base64url')

export const isWellFormedToken = (token: string, prefix: string) =>
  token.startsWith(prefix) && token.length === prefix.length + RANDOM_CHARS

export const sha256Hex = (s: string) => createHash('sha256').update(s).digest('hex')
