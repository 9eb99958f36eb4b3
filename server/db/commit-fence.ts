// A request that holds an Idempotency-Key claim must not commit a write once that claim is no longer its
// own (a slow request whose claim was taken over after 5 minutes), and a write it did commit must be known
// even if the process dies before the answer is stored. So while such a request runs, every transaction it
// opens through `Database.tx` runs the claim's fence as its last statement: the fence marks the claim
// "committed" in the same transaction, or throws when the claim is gone, which rolls the write back.
// Work the request leaves behind (a promise that outlives it) inherits the store, switched off when the
// request's handler settles (withCommitFence).
import { AsyncLocalStorage } from 'node:async_hooks'

// The transaction type stays a parameter: client.ts imports this module.
interface FenceStore {
  fence: (tx: never) => Promise<void>
  active: boolean
}

const store = new AsyncLocalStorage<FenceStore>()

/** Runs `fn` with `fence` applied to its transactions; the fence stops applying when `fn` settles. */
export async function withCommitFence<T, X>(fence: (tx: X) => Promise<void>, fn: () => Promise<T>): Promise<T> {
  const s: FenceStore = { fence: fence as (tx: never) => Promise<void>, active: true }
  try {
    return await store.run(s, fn)
  } finally {
    s.active = false
  }
}

/** `fn` as given, or followed by the current request's fence inside the same transaction. */
export function fenced<T, X>(fn: (tx: X) => Promise<T>): (tx: X) => Promise<T> {
  const s = store.getStore()
  if (!s?.active) return fn
  return async (tx) => {
    const out = await fn(tx)
    if (s.active) await s.fence(tx as never)
    return out
  }
}
