// When the queue's workers look for jobs (decisions "Issue 36: hot paths and idle cost"). pg-boss polls each
// worker on its own: about 37 workers fetching every second kept an idle instance busy at 10 % of a core. The
// workers now poll only as a backstop, and this waker tells them when to fetch:
//   - a send from this process wakes its queue at once (or, sent to start later, when it falls due);
//   - a worker that ran a job fetches again at once, so a backlog drains without waiting;
//   - one probe reads, for every queue of this process, its earliest job waiting or due for retry (pg-boss's
//     partial index job_i5 (name, start_after) WHERE state < 'active'): due queues are woken, and a timer is
//     set for the earliest job still to come.
// On PostgreSQL other instances write jobs too: a send NOTIFYs the queue schema's channel (JOBS_CHANNEL) with its queue, which wakes that
// queue's workers on every instance, and the probe runs every PROBE_NOTIFIED_MS for the rest (every poll,
// SVC_JOB_POLL_SECONDS, as before, when the LISTEN failed). On PGlite
// this process is the only writer and every statement pg-boss runs passes through `watch`: the probe runs
// after a statement that may have made a job due (an insert, a retry), at the earliest known start, and every
// PROBE_BACKSTOP_MS; an idle embedded instance probes about twice a minute (each probe plans every partition
// of the job table: 3–6 ms of CPU on PGlite).

/** An embedded instance's probe interval when nothing happens (cron slots and retries are written by pg-boss
 *  through `watch`, so this only bounds what nothing else foresaw). */
const PROBE_BACKSTOP_MS = 30_000
/** On PostgreSQL with notifications (a send on any instance NOTIFYs JOBS_CHANNEL with its queue): the probe's
 *  interval for what no notification announces, pg-boss's own inserts (cron slots) and retries written by
 *  another instance (decisions "Issue 36: idle wake-ups"). */
export const PROBE_NOTIFIED_MS = 5_000
/** NOTIFY channel of job sends (`svc_jobs_<queue schema>`); the payload is the queue's name. */
export const JOBS_CHANNEL = 'svc_jobs'

/** pg-boss statements that may add a job that is due now or later: an insert (send, cron, dead letter), a
 *  failure retried, an expiry, a resume (pg-boss 10 plans.js). */
const MAY_ADD_DUE_JOB = /INSERT INTO \S+\.job\b|'retry'|state = 'created'/

export interface Waker {
  /** Wakes the workers of `name`, now or when startAfter comes. */
  sent(name: string, startAfter?: number | Date | string): void
  /** On PGlite, called with each statement pg-boss ran (after it ran). */
  watch(text: string): void
  /** A probe shortly (a job failed here: its retry's time is read and a timer set for it). */
  soon(): void
  /** PostgreSQL: notifications of other instances' sends arrive, so the probe only backs them up. */
  notified(on: boolean): void
  /** The first probe; then the waker keeps itself running until stop. */
  start(): void
  stop(): void
}

export function createWaker(opts: {
  /** Queue names with workers in this process. */
  names: string[]
  /** Notifies the workers of a queue (boss.notifyWorker for each). */
  wake(name: string): void
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>
  schema: string
  pollMs: number
  /** True when every write to the job table passes through `watch` (PGlite). */
  watched: boolean
  onError(err: unknown): void
}): Waker {
  const { names, wake, pollMs, watched } = opts
  let notified = false
  const list = names.join(',')
  const sql = `SELECT q.name, n.start_after FROM unnest(string_to_array($1::text, ',')) AS q(name)
    CROSS JOIN LATERAL (SELECT j.start_after FROM ${opts.schema}.job j WHERE j.name = q.name AND j.state < 'active'
      ORDER BY j.start_after LIMIT 1) n`
  let stopped = false
  let probing = false
  let again = false
  let lastProbe = 0
  let timer: NodeJS.Timeout | undefined
  let timerAt = Number.POSITIVE_INFINITY
  const later = new Set<NodeJS.Timeout>()

  /** Runs the probe at `at` (epoch ms) unless it already runs sooner. */
  const probeAt = (at: number) => {
    if (stopped || at >= timerAt) return
    if (timer) clearTimeout(timer)
    timerAt = at
    timer = setTimeout(run, Math.max(0, at - Date.now()))
    timer.unref()
  }
  const run = async () => {
    timer = undefined
    timerAt = Number.POSITIVE_INFINITY
    if (stopped) return
    if (probing) {
      again = true
      return
    }
    probing = true
    lastProbe = Date.now()
    let next = Number.POSITIVE_INFINITY
    try {
      const { rows } = await opts.executeSql(sql, [list])
      const now = Date.now()
      for (const r of rows as { name: string; start_after: Date | string }[]) {
        const at = new Date(r.start_after).getTime()
        if (at <= now) wake(r.name)
        else next = Math.min(next, at)
      }
    } catch (err) {
      opts.onError(err)
    } finally {
      probing = false
    }
    const now = Date.now()
    if (again) {
      again = false
      probeAt(now + pollMs)
    }
    // pg-boss fetches jobs whose start_after < now(): a little after it.
    if (watched) probeAt(Math.min(next + 20, now + PROBE_BACKSTOP_MS))
    else probeAt(Math.min(next + 20, now + (notified ? Math.max(pollMs, PROBE_NOTIFIED_MS) : pollMs)))
  }

  return {
    sent(name, startAfter) {
      const at = startAfter === undefined ? 0 : new Date(startAfter).getTime()
      const wait = Number.isFinite(at) ? at - Date.now() : 0
      if (wait <= 0) return wake(name)
      // A timer per job sent to start within a poll; later ones are the probe's (it sets its own timer, and is
      // told of this one).
      if (wait > pollMs || stopped) return probeAt(at + 20)
      const t = setTimeout(() => {
        later.delete(t)
        wake(name)
      }, wait + 20)
      t.unref()
      later.add(t)
    },
    watch(text) {
      // At most one probe per poll for these: a backlog of sends must not turn into a probe per send.
      if (watched && MAY_ADD_DUE_JOB.test(text)) probeAt(Math.max(Date.now(), lastProbe + pollMs))
    },
    soon() {
      probeAt(Date.now() + 250)
    },
    notified(on) {
      notified = on
    },
    start() {
      probeAt(Date.now())
    },
    stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      for (const t of later) clearTimeout(t)
      later.clear()
    },
  }
}
