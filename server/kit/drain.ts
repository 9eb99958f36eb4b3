// The process's drain state (decisions "Graceful shutdown"): set on SIGTERM/SIGINT by plugins/05.shutdown.ts.
// While draining, /v1/health answers 503 so a balancer stops sending, new WebSocket sessions are refused,
// and the live ones (voice chat, provider media streams) are given the shutdown bound to end by themselves.

let drainingSince: number | undefined
const sessions = new Set<unknown>()
let onSessionEnd: (() => void) | undefined

export const isDraining = () => drainingSince !== undefined

export function startDraining() {
  drainingSince ??= Date.now()
}

/** A WebSocket session opened (keyed by its crossws peer). */
export function sessionOpened(peer: unknown) {
  sessions.add(peer)
}

export function sessionClosed(peer: unknown) {
  sessions.delete(peer)
  if (!sessions.size) onSessionEnd?.()
}

export const liveSessions = () => sessions.size

/** Resolves true once no session is live, false when `timeoutMs` passed first. */
export function sessionsEnded(timeoutMs: number): Promise<boolean> {
  if (!sessions.size) return Promise.resolve(true)
  return new Promise((done) => {
    const timer = setTimeout(
      () => {
        onSessionEnd = undefined
        done(false)
      },
      Math.max(0, timeoutMs),
    )
    onSessionEnd = () => {
      clearTimeout(timer)
      onSessionEnd = undefined
      done(true)
    }
  })
}
