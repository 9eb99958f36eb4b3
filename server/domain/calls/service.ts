// The outbound side of a running process: its heartbeat (the instances table names the owners of calls),
// the reconciliation of calls whose instance stopped beating, the campaign dialler's hooks, and on the
// simulated network the people who answer the calls this process places.
import type { Runtime } from '~/kit/runtime'
import './dialer'
import { beat, outboundCtx } from './outbound'
import { reconcileCalls } from './reconcile'
import { startSimulatedNetwork } from './simulator'

const BEAT_MS = 2_000

export function startOutbound(runtime: Runtime): () => void {
  const ctx = outboundCtx(runtime)
  const staleS = runtime.config.callStaleSeconds
  let busy = false
  let ticks = 0
  const tick = async () => {
    if (busy) return
    busy = true
    try {
      await beat(runtime.database.db)
      // Reconcile about twice per stale window.
      if (++ticks % Math.max(1, Math.floor((staleS * 1000) / BEAT_MS / 2)) === 0) await reconcileCalls(ctx, staleS)
    } catch (err) {
      console.error(`[calls] heartbeat: ${err instanceof Error ? err.message : err}`)
    } finally {
      busy = false
    }
  }
  void tick()
  const timer = setInterval(tick, BEAT_MS)
  timer.unref()
  const stopNetwork = runtime.providers.telephony.name === 'simulated' ? startSimulatedNetwork(runtime) : () => {}
  return () => {
    clearInterval(timer)
    stopNetwork()
  }
}
