// Stored answers that carry a secret (a new key, a rotated key, a webhook signing secret, a login link,
// a widget visitor token)
// are kept for their 24 hours only AES-256-GCM encrypted, under a key derived from SVC_SECRET, with the
// whole idempotency scope (credential, method, path, key and account) as associated data: the row cannot
// be decrypted by anyone without the server secret, nor replayed for another credential or copied to
// another row.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import { apiError } from '~/lib/errors'
import type { Claim, StoredAnswer } from './idempotency'

// A safety net beside the routes' secretResponse option: an answer that holds anything shaped like one of
// our secrets is sealed too, so a new route that forgets the option still keeps no plaintext secret.
const SECRET_SHAPE =
  /(svc_sk_live_|svc_mk_live_|svc_ses_|svc_lnk_|svc_at_|svc_rt_|svc_cs_|svc_vt_|whsec_)[A-Za-z0-9_-]{20}/

export const carriesSecret = (answer: StoredAnswer) => SECRET_SHAPE.test(JSON.stringify(answer.payload) ?? '')

const keyOf = (serverSecret: string) =>
  createHash('sha256').update('svc-idempotency-answer-v1\0').update(serverSecret).digest()

const aadOf = (k: Claim['key']) => Buffer.from([k.credentialId, k.method, k.path, k.key].join('\n'))

export function sealAnswer(serverSecret: string, k: Claim['key'], answer: StoredAnswer): StoredAnswer {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', keyOf(serverSecret), iv)
  cipher.setAAD(aadOf(k))
  const ct = Buffer.concat([cipher.update(JSON.stringify(answer.payload), 'utf8'), cipher.final()])
  const sealed = [
    'v1',
    iv.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    ct.toString('base64url'),
  ].join('.')
  return { status: answer.status, kind: answer.kind, payload: null, sealed }
}

/** The stored answer in clear; a sealed one that no longer opens (SVC_SECRET changed) cannot be replayed. */
export function openAnswer(serverSecret: string, k: Claim['key'], stored: StoredAnswer): StoredAnswer {
  if (stored.sealed === undefined) return stored
  try {
    const [version, iv, tag, ct] = stored.sealed.split('.')
    if (version !== 'v1' || !iv || !tag || !ct) throw new Error('unknown sealed answer format')
    const decipher = createDecipheriv('aes-256-gcm', keyOf(serverSecret), Buffer.from(iv, 'base64url'))
    decipher.setAAD(aadOf(k))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    const plain = Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8')
    return { status: stored.status, kind: stored.kind, payload: JSON.parse(plain) }
  } catch {
    throw apiError(
      'idempotency_key_reused',
      'The answer stored for this Idempotency-Key can no longer be replayed; send the request with a new key.',
      'Idempotency-Key',
    )
  }
}
