// Which (widget token, Origin) pairs this instance admitted lately, so that a per-IP 429 can carry CORS
// headers for an admitted Origin without a database query (the point of the IP limit is to spare the
// token lookup; docs/decisions.md "Widget, config and the per-IP 429"). In memory, per instance: an entry
// says only that this pair passed the full check within the last ten minutes, and it grants nothing but
// a readable 429. Bounded (oldest dropped first), so forged Origins under a `*.` entry cannot grow it.
const TTL_MS = 10 * 60_000
const MAX_ENTRIES = 10_000

const admitted = new Map<string, number>()
const keyOf = (token: string, origin: string) => `${token} ${origin.toLowerCase()}`

/** Notes that `token` was admitted from `origin` (called after the Origin check passed). */
export function rememberAdmitted(token: string, origin: string, now = Date.now()) {
  const key = keyOf(token, origin)
  const expires = admitted.get(key)
  // Refreshed at most once per half lifetime: the common case is one Map read.
  if (expires !== undefined && expires - now > TTL_MS / 2) return
  admitted.delete(key)
  if (admitted.size >= MAX_ENTRIES) {
    const oldest = admitted.keys().next().value
    if (oldest !== undefined) admitted.delete(oldest)
  }
  admitted.set(key, now + TTL_MS)
}

/** True when `token` was admitted from `origin` within the last ten minutes on this instance. */
export function admittedLately(token: string | undefined, origin: string | undefined, now = Date.now()): boolean {
  if (!token || !origin) return false
  const expires = admitted.get(keyOf(token, origin))
  return expires !== undefined && expires > now
}
