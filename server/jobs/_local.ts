// A scheduled job (a sweep) run in this process instead of through the queue (decisions "Issue 36: idle, the
// minute sweeps"; which jobs: runsHere in _queue.ts). What the queue added to a sweep was mostly its cost:
// each run was a send, two fetches, the instance stamp and the completion around the sweep's own statements
// (~45 of the ~155 statements of an idle PGlite minute, and the 10 s idle-sweep chain as many again). Sweeps
// are idempotent and re-run by the next slot; after a crash the start-up run (runAtStart) catches up, as the
// queue's lost jobs did. What the queue's semantics gave them is kept: one run at a time in the process, at
// most one run waiting (a request while one waits is folded into it, as pg-boss's `short` policy), a run sent
// to start later waits for its time (the sweeps' sub-minute chains), a failed run is retried after the job's
// retry delay (doubling) up to its retry limit, and each run counts in `svc_jobs_total` and has its span.
import { countJob } from '~/kit/metrics'
import type { JobContext, JobDefinition } from '~/kit/job'
import { inSpan, SpanKind } from '~/kit/tracing'

export interface LocalRunner {
  /** A run now, or at startAfter; answers the run's id. */
  request(startAfter?: number | Date | string, retryCount?: number): string
  /** Stops its timers and waits for a run under way. */
  stop(): Promise<void>
}

let seq = 0

/** One run of a job, through the queue or in the process: its span and its count in `svc_jobs_total`; a
 *  failure is counted and thrown on to the caller, which retries it. */
export async function runJob(
  job: JobDefinition,
  data: unknown,
  ctx: JobContext,
  meta: { id: string; retryCount: number },
): Promise<void> {
  try {
    await inSpan(
      `job ${job.name}`,
      { 'svc.job.queue': job.name, 'svc.job.retry': meta.retryCount },
      () => job.run(data as any, ctx, meta),
      SpanKind.CONSUMER,
    )
  } catch (err) {
    countJob(job.name, 'failed')
    throw err
  }
  countJob(job.name, 'completed')
}

export function createLocalRunner(job: JobDefinition, ctx: JobContext): LocalRunner {
  let running: Promise<void> | undefined
  /** The waiting run: its time (epoch ms) and its timer. */
  let waiting: { at: number; retryCount: number; timer?: NodeJS.Timeout } | undefined
  let stopped = false

  const run = async (retryCount: number) => {
    const id = `local-${job.name}-${++seq}`
    try {
      await runJob(job, {}, ctx, { id, retryCount })
    } catch (err) {
      const limit = job.retryLimit ?? 3
      ctx.log(`${job.name} failed${retryCount < limit ? ', retried' : ''}: ${err instanceof Error ? err.message : err}`)
      if (retryCount < limit)
        request(Date.now() + (job.retryDelaySeconds ?? 5) * 1000 * 2 ** retryCount, retryCount + 1)
    }
  }
  /** Starts the waiting run if it is due and none runs. */
  const pump = () => {
    if (stopped || running || !waiting) return
    // A timer may fire a millisecond before Date.now() reaches its time: set again for the rest.
    const wait = waiting.at - Date.now()
    if (wait > 0) {
      clearTimeout(waiting.timer)
      waiting.timer = setTimeout(pump, wait)
      waiting.timer.unref()
      return
    }
    const { retryCount } = waiting
    clearTimeout(waiting.timer)
    waiting = undefined
    running = run(retryCount).finally(() => {
      running = undefined
      pump()
    })
  }
  const request = (startAfter?: number | Date | string, retryCount = 0) => {
    const given = startAfter === undefined ? Date.now() : new Date(startAfter).getTime()
    const at = Number.isFinite(given) ? given : Date.now()
    if (stopped) return ''
    // One waiting run: the earlier time wins.
    if (waiting && waiting.at <= at) return `local-${job.name}`
    clearTimeout(waiting?.timer)
    waiting = { at, retryCount }
    const wait = at - Date.now()
    if (wait > 0) {
      waiting.timer = setTimeout(pump, wait)
      waiting.timer.unref()
    } else setImmediate(pump)
    return `local-${job.name}`
  }
  return {
    request,
    async stop() {
      stopped = true
      clearTimeout(waiting?.timer)
      waiting = undefined
      await running
    },
  }
}
