// The outbound side of a running process: its heartbeat (the instances table names the owners of calls),
// the reconciliation of calls whose instance stopped beating, the campaign dialler's hooks, and on the
// simulated network the people who answer the calls this process places.
import type { Runtime } from '~/kit/runtime'
import './dialer'
import { beat, outboundCtx } from './outbound'
import { reconcileCalls } from './reconcile'
import { startSimulatedNetwork } from './simulator'

const BEAT_MS = 2_000
/** On PGlite this process is the only instance: once the windows in which a previous process's calls are
 *  reconciled have passed, its beat only tells `GET /admin/system/status` that it is live (seen in 60 s); no
 *  other instance judges it by its beat, and reconcile.ts never counts this process's own calls as orphans
 *  (decisions "Issue 36: idle wake-ups"). */
const EMBEDDED_BEAT_MS = 20_000

export function startOutbound(runtime: Runtime): () => void {
  const ctx = outboundCtx(runtime)
  const staleS = runtime.config.callStaleSeconds
  const embedded = runtime.database.kind === 'pglite'
  const startedAt = Date.now()
  // On PGlite only calls of a process that ran before this one can be orphaned, and they are found in the first
  // stale windows; after those the minute sweep (outbound.sweep, which reconciles too) is enough.
  const early = () => Date.now() - startedAt <= 2 * (staleS * 1000 + 5_000)
  let stopped = false
  let ticks = 0
  const tick = async () => {
    try {
      await beat(runtime.database.db)
      // Reconcile about twice per stale window.
      if (++ticks % Math.max(1, Math.floor((staleS * 1000) / BEAT_MS / 2)) === 0 && (!embedded || early()))
        await reconcileCalls(ctx, staleS)
    } catch (err) {
      console.error(`[calls] heartbeat: ${err instanceof Error ? err.message : err}`)
    }
  }
  let timer: NodeJS.Timeout | undefined
  const next = () => {
    if (stopped) return
    timer = setTimeout(() => void tick().finally(next), embedded && !early() ? EMBEDDED_BEAT_MS : BEAT_MS)
    timer.unref()
  }
  void tick().finally(next)
  const stopNetwork = runtime.providers.telephony.name === 'simulated' ? startSimulatedNetwork(runtime) : () => {}
  return () => {
    stopped = true
    clearTimeout(timer)
    stopNetwork()
  }
}
