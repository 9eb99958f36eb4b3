// When a scheduled knowledge sync is due (decisions "Knowledge sync"): each agent has a moment of its own
// within the day or the week, from a hash of its id, so a thousand agents do not all fetch at midnight.
// A sync is due once the current period's moment has passed and nothing has fetched the agent's pages
// since (no sync started after it, no page fetched after it): at most one scheduled sync per period.
import { createHash } from 'node:crypto'
import type { KbSyncSchedule } from './sync-schemas'

export const PERIOD_MS: Record<Exclude<KbSyncSchedule, 'off'>, number> = {
  daily: 86_400_000,
  weekly: 7 * 86_400_000,
}

/** The agent's moment within a period, in ms from the period's start (epoch-aligned, UTC). */
export function offsetOf(agentId: string, periodMs: number): number {
  const h = createHash('sha256').update(agentId).digest()
  // 48 bits of the hash: uniform enough over a week's milliseconds (6e8) and exact in a double.
  return h.readUIntBE(0, 6) % periodMs
}

/** The latest of the agent's moments at or before `now`. */
export function slotStart(agentId: string, schedule: Exclude<KbSyncSchedule, 'off'>, now: number): number {
  const period = PERIOD_MS[schedule]
  const offset = offsetOf(agentId, period)
  return Math.floor((now - offset) / period) * period + offset
}

/** Whether a scheduled sync is due: the last fetch of the agent's pages (a sync's start or a page fetch) is before this period's moment. */
export function isDue(agentId: string, schedule: KbSyncSchedule, lastFetch: number | null, now = Date.now()): boolean {
  if (schedule === 'off') return false
  return lastFetch === null || lastFetch < slotStart(agentId, schedule, now)
}
