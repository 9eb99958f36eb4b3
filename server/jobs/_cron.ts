// The cron of the jobs' `schedule` (decisions "Issue 36: idle, the minute sweeps"). pg-boss's timekeeper
// evaluated every schedule with cron-parser and luxon every 30 s, sent each due job through a queue of its
// own (`__pgboss__send-it`) and polled that queue every 5 s: ~8 % of an idle instance's CPU and 14 wake-ups
// a minute. This one sets one timer for the next minute slot in which a job is due, and sends that slot's
// jobs then. On PostgreSQL several instances share the queue: the instance whose conditional UPDATE of
// pg-boss's own `version.cron_on` moves it forward to the slot sends the slots it moved over (one statement
// per instance per due slot), so each slot's jobs are sent once whatever the instances' clocks.

/** The minutes of one cron field that match, as a set (null: every value, `*`). */
type Field = Set<number> | null

/** Standard five-field cron (minute hour day-of-month month day-of-week), UTC: numbers, `*`, ranges
 *  `a-b`, steps `/n` and lists; day-of-week 0–7 (0 and 7 are Sunday); when both day fields are
 *  restricted a day matches either (as cron does). Throws on anything else. */
export function parseCron(expr: string): (at: Date) => boolean {
  const parts = expr.trim().split(/\s+/)
  if (parts.length !== 5) throw new Error(`cron "${expr}": five fields expected`)
  const bounds: [number, number][] = [
    [0, 59],
    [0, 23],
    [1, 31],
    [1, 12],
    [0, 7],
  ]
  const fields: Field[] = parts.map((p, i) => {
    const [lo, hi] = bounds[i]!
    if (p === '*') return null
    const set = new Set<number>()
    for (const item of p.split(',')) {
      const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(item)
      if (!m) throw new Error(`cron "${expr}": cannot read "${item}"`)
      const from = m[1] === '*' ? lo : Number(m[2])
      const to = m[1] === '*' ? hi : m[3] !== undefined ? Number(m[3]) : m[4] !== undefined ? hi : from
      const step = m[4] !== undefined ? Number(m[4]) : 1
      if (from < lo || to > hi || from > to || step < 1) throw new Error(`cron "${expr}": "${item}" out of range`)
      for (let v = from; v <= to; v += step) set.add(i === 4 && v === 7 ? 0 : v)
    }
    return set
  })
  const [min, hour, dom, month, dow] = fields
  const has = (f: Field, v: number) => f === null || f.has(v)
  return (at) => {
    if (!has(min!, at.getUTCMinutes()) || !has(hour!, at.getUTCHours()) || !has(month!, at.getUTCMonth() + 1))
      return false
    const d = has(dom!, at.getUTCDate())
    const w = has(dow!, at.getUTCDay())
    return dom && dow ? d || w : d && w
  }
}

const MINUTE = 60_000
/** Slots looked at ahead for the next due one; past that the timer is set anyway and looks again. */
const LOOK_AHEAD = 60
/** A process that woke late (a stopped VM, a blocked loop) sends the slots it missed, back to this many. */
const CATCH_UP = 5

/**
 * Moves pg-boss's `version.cron_on` (its timekeeper's, unused with `schedule: false`) to the slot `slot`
 * (epoch ms) if it is behind it; answers the slot it was at (null: never set), or undefined when it was not
 * behind (another instance took the slot). Instances that race for a slot wait on the row's lock; the one
 * that waited then reads the moved value and finds the slot taken.
 */
export async function claimSlot(
  executeSql: (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>,
  schema: string,
  slot: number,
): Promise<number | null | undefined> {
  const { rows } = await executeSql(
    `UPDATE ${schema}.version v SET cron_on = to_timestamp($1::double precision / 1000)
      FROM (SELECT version, cron_on FROM ${schema}.version FOR UPDATE) p
      WHERE v.version = p.version AND (p.cron_on IS NULL OR p.cron_on < to_timestamp($1::double precision / 1000))
      RETURNING (extract(epoch FROM p.cron_on) * 1000)::float8 AS prev`,
    [slot],
  )
  const r = rows[0] as { prev: number | string | null } | undefined
  return r === undefined ? undefined : r.prev === null ? null : Number(r.prev)
}

export interface Cron {
  stop(): void
}

export function startCron(opts: {
  jobs: { name: string; schedule: string }[]
  send(name: string): Promise<unknown>
  /** PostgreSQL: moves the shared slot to `slot` (epoch ms) if it is behind it, answering the slot it was at
   *  (epoch ms, null if never set), or undefined when another instance got there first. */
  claim?(slot: number): Promise<number | null | undefined>
  log(message: string): void
  now?: () => number
}): Cron {
  const now = opts.now ?? Date.now
  const jobs = opts.jobs.map((j) => ({ name: j.name, due: parseCron(j.schedule) }))
  const dueAt = (slot: number) => {
    const at = new Date(slot)
    return jobs.filter((j) => j.due(at)).map((j) => j.name)
  }
  // The start's own slot is the start-up runs' (runAtStart); the first slot sent is the next one.
  let last = Math.floor(now() / MINUTE) * MINUTE
  let timer: NodeJS.Timeout | undefined
  let stopped = false

  const arm = () => {
    if (stopped) return
    let next = last + MINUTE
    for (let i = 0; i < LOOK_AHEAD && !dueAt(next).length; i++) next += MINUTE
    timer = setTimeout(tick, Math.max(0, next - now()))
    timer.unref()
  }
  const tick = async () => {
    const slot = Math.floor(now() / MINUTE) * MINUTE
    try {
      if (slot <= last) return
      let from = Math.max(last, slot - CATCH_UP * MINUTE)
      last = slot
      if (opts.claim) {
        // Only worth a statement when this instance has a job due in one of the slots.
        let any = false
        for (let s = from + MINUTE; s <= slot && !any; s += MINUTE) any = dueAt(s).length > 0
        if (!any) return
        const prev = await opts.claim(slot)
        if (prev === undefined) return
        // The shared slot is the record: slots no instance sent (all were down or busy) are sent now, back
        // to CATCH_UP. pg-boss's timekeeper left a time inside a minute there: that minute was its.
        from = prev === null ? slot - MINUTE : Math.max(Math.floor(prev / MINUTE) * MINUTE, slot - CATCH_UP * MINUTE)
      }
      const names = new Set<string>()
      for (let s = from + MINUTE; s <= slot; s += MINUTE) for (const n of dueAt(s)) names.add(n)
      for (const name of names)
        await opts
          .send(name)
          .catch((err) => opts.log(`cron: send ${name}: ${err instanceof Error ? err.message : err}`))
    } catch (err) {
      opts.log(`cron: ${err instanceof Error ? err.message : err}`)
    } finally {
      arm()
    }
  }
  arm()
  return {
    stop() {
      stopped = true
      clearTimeout(timer)
    },
  }
}
