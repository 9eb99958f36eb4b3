// Graceful shutdown, built on Nitro's own (nitropack runtime/internal/shutdown.ts): on its signal it stops
// listening, answers the requests in flight (keep-alive ones with `Connection: close`, so every chat turn
// in a request completes), waits for open connections up to NITRO_SHUTDOWN_TIMEOUT, then calls the
// `close` hook (stopRuntime: webhook leases given back, audit flushed, pg-boss stopped gracefully with its
// unfinished jobs failed for a retry elsewhere, the database closed) and exits 0.
// What it lacks: a drain phase. It destroys idle and upgraded sockets at once, so a live voice session
// would be cut, and health stays 200 until the port closes. So this plugin takes SIGTERM and SIGINT
// first: it marks the process draining (health 503, new WebSocket sessions refused), waits for
// SVC_SHUTDOWN_DELAY_SECONDS and for the live sessions (both within SVC_SHUTDOWN_TIMEOUT_SECONDS), and
// only then hands over to Nitro's shutdown, which listens to an internal event instead of the signals.
// An operator who sets NITRO_SHUTDOWN_SIGNALS or NITRO_SHUTDOWN_DISABLED keeps Nitro's behaviour as is.
import { defineNitroPlugin } from 'nitropack/runtime'
import { loadConfig } from '~/config'
import { liveSessions, sessionsEnded, startDraining } from '~/kit/drain'

/** The event Nitro's shutdown listens to once this plugin owns the signals. */
export const DRAINED_EVENT = 'svc:drained'

export default defineNitroPlugin(() => {
  if (process.env.NITRO_SHUTDOWN_DISABLED || process.env.NITRO_SHUTDOWN_SIGNALS) return
  const { shutdownTimeoutSeconds, shutdownDelaySeconds } = loadConfig()
  // Read by Nitro's setupGracefulShutdown, which runs after the plugins.
  process.env.NITRO_SHUTDOWN_SIGNALS = DRAINED_EVENT
  process.env.NITRO_SHUTDOWN_TIMEOUT ??= String(shutdownTimeoutSeconds * 1000)
  let signalled = false
  const onSignal = async (signal: NodeJS.Signals) => {
    if (signalled) return
    signalled = true
    startDraining()
    const deadline = Date.now() + shutdownTimeoutSeconds * 1000
    console.log(
      `[shutdown] ${signal}: draining (health 503; ${liveSessions()} live session(s); in-flight requests finish)`,
    )
    if (shutdownDelaySeconds > 0) await new Promise((r) => setTimeout(r, shutdownDelaySeconds * 1000))
    if (!(await sessionsEnded(deadline - Date.now())))
      console.log(`[shutdown] ${liveSessions()} session(s) still live after the bound: closing them`)
    process.emit(DRAINED_EVENT as 'SIGTERM', signal)
  }
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
})
