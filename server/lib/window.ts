// Date windows of the read routes: [from, to), from strictly before to (400 invalid_date_range on field
// from). A closed window fills what the client left out; an open one keeps its missing ends.
import { Errors } from './errors'

const DAY_MS = 86_400_000

export interface Window {
  from: Date
  to: Date
  /** Neither end was given. */
  defaulted: boolean
}

/**
 * A closed window: `to` defaults to now, `from` to `defaultMs` before `to`. With `maxDays`, a longer
 * window is refused too.
 */
export function parseWindow(
  from: string | undefined,
  to: string | undefined,
  opts: { defaultMs: number; maxDays?: number; now?: Date },
): Window {
  const end = to ? new Date(to) : (opts.now ?? new Date())
  const start = from ? new Date(from) : new Date(end.getTime() - opts.defaultMs)
  requireOrder(start, end)
  if (opts.maxDays !== undefined && end.getTime() - start.getTime() > opts.maxDays * DAY_MS)
    throw Errors.invalidDateRange(`The window may span at most ${opts.maxDays} days.`)
  return { from: start, to: end, defaulted: !from && !to }
}

/** An open window: only when both ends are given must from precede to. */
export function requireOrder(from: Date | null | undefined, to: Date | null | undefined) {
  if (from && to && from.getTime() >= to.getTime()) throw Errors.invalidDateRange()
}
