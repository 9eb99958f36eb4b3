// Endpoint signing secrets: minted once, shown once, stored only encrypted. AES-256-GCM with a key
// derived from SVC_SECRET and the account id as associated data, so a ciphertext copied to another
// tenant's row does not decrypt.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import { mintToken } from '~/lib/opaque-token'

export const newSigningSecret = () => mintToken('whsec_')

const keyOf = (serverSecret: string) =>
  createHash('sha256').update('svc-webhook-secret-v1\0').update(serverSecret).digest()

export function encryptSecret(serverSecret: string, accountId: string, plain: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', keyOf(serverSecret), iv)
  cipher.setAAD(Buffer.from(accountId))
  const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.')
}

export function decryptSecret(serverSecret: string, accountId: string, stored: string): string {
  const [version, iv, tag, ct] = stored.split('.')
  if (version !== 'v1' || !iv || !tag || !ct) throw new Error('unknown webhook secret format')
  const decipher = createDecipheriv('aes-256-gcm', keyOf(serverSecret), Buffer.from(iv, 'base64url'))
  decipher.setAAD(Buffer.from(accountId))
  decipher.setAuthTag(Buffer.from(tag, 'base64url'))
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8')
}
