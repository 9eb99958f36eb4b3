// Receiver-side check of a delivery, for integrators and the tests. Pure: node:crypto only, no server
// imports, so it can be copied into a receiver as is.
import { createHmac, timingSafeEqual } from 'node:crypto'

export type HeaderBag = Headers | Record<string, string | string[] | undefined>

export interface VerifyOptions {
  /** The endpoint's whsec_… secret; during a rotation either secret is accepted. */
  secret: string | string[]
  /** The raw request body, exactly as received (not re-serialised JSON). */
  body: string | Buffer
  headers: HeaderBag
  /** Older (or further in the future) timestamps are refused; default 300 s. */
  toleranceSeconds?: number
  /** Clock for tests, epoch milliseconds. */
  now?: number
}

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined
  const bag = headers as Record<string, string | string[] | undefined>
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name)
  const value = key === undefined ? undefined : bag[key]
  return Array.isArray(value) ? value.join(',') : value
}

/** The hex HMAC-SHA256 of "<timestamp>.<body>" keyed with the whole whsec_… string. */
export function signPayload(secret: string, timestamp: number | string, body: string | Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')
}

/**
 * True when X-Svc-Timestamp is within the tolerance and one of the `v1=` values of X-Svc-Signature is
 * the HMAC of "<timestamp>.<body>" under one of the secrets. Compared in constant time.
 */
export function verifyWebhook(opts: VerifyOptions): boolean {
  const ts = header(opts.headers, 'x-svc-timestamp')
  const sig = header(opts.headers, 'x-svc-signature')
  if (!ts || !sig || !/^\d{1,12}$/.test(ts)) return false
  const now = Math.floor((opts.now ?? Date.now()) / 1000)
  if (Math.abs(now - Number(ts)) > (opts.toleranceSeconds ?? 300)) return false
  const given = sig
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.startsWith('v1='))
    .map((s) => s.slice(3))
  const secrets = Array.isArray(opts.secret) ? opts.secret : [opts.secret]
  let ok = false
  for (const secret of secrets) {
    const expected = Buffer.from(signPayload(secret, ts, opts.body), 'hex')
    for (const g of given) {
      if (!/^[0-9a-f]{64}$/i.test(g)) continue
      // No early exit: every candidate is compared, so timing says nothing about which one matched.
      if (timingSafeEqual(expected, Buffer.from(g, 'hex'))) ok = true
    }
  }
  return ok
}
