// Polling for work the server finishes in the background (jobs, deliveries, summaries).
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Calls `fn` until it answers something truthy and answers that; throws naming `what` after the timeout. */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false>,
  timeoutMs = 30_000,
  intervalMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const got = await fn()
    if (got) return got
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(intervalMs)
  }
}
