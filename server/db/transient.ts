// PostgreSQL answers a transaction that lost a lock race with 40P01 (deadlock detected) or 40001
// (serialization failure): nothing was written, and the same transaction run again succeeds. Drizzle wraps
// the driver's error (`cause`), so the code is looked for down the chain.
const RETRYABLE = new Set(['40P01', '40001'])

/** Whether `err` (or an error it wraps) is a deadlock or serialization failure. */
export function isTransientDbError(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && RETRYABLE.has(code)) return true
  }
  return false
}

/**
 * Runs `fn` (one whole transaction) again, up to `attempts` times in all, when it lost a lock race. For
 * background work only: a request answers the client instead. The pause grows and is jittered so the two
 * losers do not meet again.
 */
export async function retryTransient<T>(fn: () => Promise<T>, attempts = 3): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn()
    } catch (e) {
      if (i >= attempts || !isTransientDbError(e)) throw e
      await new Promise((r) => setTimeout(r, 20 * i + Math.random() * 30 * i))
    }
  }
}
