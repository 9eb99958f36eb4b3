// The outbound side of a running process: its heartbeat (the instances table names the owners of calls),
// the reconciliation of calls whose instance stopped beating, the campaign dialler's hooks, and on the
// simulated network the people who answer the calls this process places.
import type { Runtime } from '~/kit/runtime'
import './dialer'
import { beat, outboundCtx } from './outbound'
import { reconcileCalls } from './reconcile'
import { startSimulatedNetwork } from './simulator'

/** The beat on PostgreSQL is a third of SVC_CALL_STALE_SECONDS (the other instances judge this one dead once
 *  its last beat is that old: two beats may be lost or late before it is), and at least this. The start-up
 *  windows of PGlite beat as PostgreSQL (decisions "Issue 36: idle, the minute sweeps"). */
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
  const beatMs = Math.max(BEAT_MS, Math.floor((staleS * 1000) / 3))
  let stopped = false
  let ticks = 0
  const tick = async () => {
    try {
      await beat(runtime.database.db)
      // Reconcile about twice per stale window.
      if (++ticks % Math.max(1, Math.round((staleS * 1000) / beatMs / 2)) === 0 && (!embedded || early()))
        await reconcileCalls(ctx, staleS)
    } catch (err) {
      console.error(`[calls] heartbeat: ${err instanceof Error ? err.message : err}`)
    }
  }
  let timer: NodeJS.Timeout | undefined
  const next = () => {
    if (stopped) return
    timer = setTimeout(() => void tick().finally(next), embedded && !early() ? EMBEDDED_BEAT_MS : beatMs)
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
