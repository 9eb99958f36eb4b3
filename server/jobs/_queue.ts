// pg-boss on the same database: directly on PostgreSQL, through the `db.executeSql` adapter on PGlite.
// Jobs live in the database, so a restart (or a crash) resumes them; any number of instances share them.
import PgBoss from 'pg-boss'
import type { Database } from '~/db/client'
import type { JobContext, JobDefinition, Queue } from '~/kit/job'
import { resolveProviders, type Providers } from '~/kit/providers'
export type { Queue } from '~/kit/job'
import { createRegistry } from '~/kit/registry'
import { createFsBlobStore, type BlobStore } from '~/kit/blob-store'
import { INSTANCE_ID } from '~/domain/calls/instance'
import { createWaker, JOBS_CHANNEL, type Waker } from './_waker'
import { queueOptions } from './_queue-options'
import { type Cron, claimSlot, startCron } from './_cron'
import { createLocalRunner, type LocalRunner, runJob } from './_local'

/** How often each instance looks for jobs held by an instance that stopped beating. */
const REAP_MS = 5_000
/** On PGlite, once the start-up windows have passed (see the reaper). */
const REAP_IDLE_MS = 60_000

/** How often a worker looks for jobs on its own: a backstop only, the waker tells it when (jobs/_waker.ts). */
const WORKER_BACKSTOP_SECONDS = 300

/**
 * A scheduled job that runs in the process that sends it, not through the queue (_local.ts; decisions "Issue 36:
 * idle, the minute sweeps"). PGlite: every scheduled job (one process owns the database). PostgreSQL: a job
 * due every minute and not a `short` chain: the instance that claims a slot runs it (and each start its own
 * start-up run); a run lost with its instance is the next minute's. The `short` chains (idle sweep, knowledge
 * sync sweep) stay in the queue on PostgreSQL, where the queue keeps one link for all instances, and so do the
 * hourly and daily jobs, which the queue's reaper hands to another instance when theirs stops.
 */
export const runsHere = (job: JobDefinition, postgres: boolean) =>
  !!job.schedule && (!postgres || (job.schedule.trim() === '* * * * *' && job.policy !== 'short'))

export async function startQueue(opts: {
  database: Database
  databaseUrl?: string
  jobs: JobDefinition[]
  pollSeconds: number
  registries: JobContext['registries']
  /** Resolved at boot; a process that starts only the queue (tests) resolves them on first use. */
  providers?: Providers
  config: JobContext['config']
  /** Defaults to the filesystem store under config.dataDir. */
  blobs?: BlobStore
  log?: (m: string, extra?: Record<string, unknown>) => void
}): Promise<Queue> {
  let waker: Waker | undefined
  const registry = createRegistry<JobDefinition>('job')
  registry.registerAll(opts.jobs)
  const log = opts.log ?? ((m, extra) => console.log(`[jobs] ${m}`, extra ?? ''))
  const boss = opts.databaseUrl
    ? // No timekeeper (`schedule: false`): the jobs' schedules are this module's cron (_cron.ts).
      new PgBoss({ connectionString: opts.databaseUrl, max: 4, schema: opts.config.queueSchema, schedule: false })
    : new PgBoss({
        schedule: false,
        // Every statement pg-boss runs passes here on PGlite: the waker sees the writes that make jobs due.
        db: {
          executeSql: async (text: string, values?: unknown[]) => {
            const result = await opts.database.executeSql(text, values)
            waker?.watch(text)
            return result
          },
        },
        schema: opts.config.queueSchema,
      } as any)
  let lastErrorAt = 0
  boss.on('error', (err) => {
    lastErrorAt = Date.now()
    log(`error: ${err.message}`)
  })
  await boss.start()

  // Instances with another queue schema on the same database have queues of their own.
  const jobsChannel = `${JOBS_CHANNEL}_${opts.config.queueSchema}`
  // The workers of each queue, by name, for the waker (decisions "Issue 36").
  const workerIds = new Map<string, string[]>()
  const wake = (name: string) => {
    for (const id of workerIds.get(name) ?? []) boss.notifyWorker(id)
  }
  // The sweeps that run in this process, not through the queue (runsHere, _local.ts).
  const local = new Map<string, LocalRunner>()
  const send: JobContext['send'] = async (name, data = {}, o = {}) => {
    const runner = local.get(name)
    if (runner) return runner.request(o.startAfter)
    const id = await boss.send(name, data, { singletonKey: o.singletonKey, startAfter: o.startAfter as any })
    if (id) {
      waker?.sent(name, o.startAfter)
      // The other instances' workers of the queue too (PostgreSQL; the insert above has committed).
      if (opts.databaseUrl)
        await opts.database
          .executeSql('SELECT pg_notify($1, $2)', [jobsChannel, name])
          .catch((err) => log(`notify ${name}: ${err instanceof Error ? err.message : err}`))
    }
    return id
  }
  const ctx: JobContext = {
    database: opts.database,
    send,
    log,
    registries: opts.registries,
    get providers() {
      opts.providers ??= resolveProviders(opts.registries, opts.config)
      return opts.providers
    },
    config: opts.config,
    blobs: opts.blobs ?? createFsBlobStore(opts.config.blobDir),
  }

  // pg-boss records no worker: an active job whose process was killed stays active until it expires (15
  // minutes), and its document, build or summary waits as long. Each job names its instance in its output
  // while it runs (the job's output is only written again when it completes); any instance fails the jobs
  // of an instance that has not beaten (the instances table, calls/service.ts) for SVC_CALL_STALE_SECONDS,
  // and pg-boss retries them after their retry delay. A job still unnamed after that long was fetched by a
  // process that died before naming it (the name is written right after the fetch; the likeliest way a
  // CI chaos run left a document processing past its drain): it is failed too. Handlers are idempotent,
  // so a job whose instance only looked dead, or was slow to name it, runs twice at worst.
  const schema = opts.config.queueSchema
  // By name too: the job table is partitioned by queue name, and a statement without it plans every partition.
  const own = (name: string, id: string) =>
    opts.database
      .executeSql(
        `UPDATE ${schema}.job SET output = jsonb_build_object('instance', $1::text)
          WHERE name = $3 AND id = $2::uuid AND state = 'active'`,
        [INSTANCE_ID, id, name],
      )
      .catch((err) => log(`own ${id}: ${err instanceof Error ? err.message : err}`))
  const stale = opts.config.callStaleSeconds
  const reap = async () => {
    try {
      const { rows } = await opts.database.executeSql(
        `SELECT j.name, j.id, NOT coalesce(j.output ? 'instance', false) AS unnamed FROM ${schema}.job j
          WHERE j.state = 'active' AND j.started_on < now() - make_interval(secs => $2::double precision)
            AND (NOT coalesce(j.output ? 'instance', false)
              OR (j.output->>'instance' <> $1::text
                AND NOT EXISTS (SELECT 1 FROM instances i WHERE i.id = j.output->>'instance'
                  AND i.seen_at > now() - make_interval(secs => $2::double precision))))
          LIMIT 100`,
        [INSTANCE_ID, stale],
      )
      for (const r of rows as { name: string; id: string; unnamed: boolean }[]) {
        await boss.fail(r.name, r.id, { error: 'the instance running this job stopped' })
        log(`retrying ${r.name} job ${r.id}: its instance stopped${r.unnamed ? ' before naming itself on it' : ''}`)
      }
      // The probe reads when the retries fall due and sets its timer for them.
      if (rows.length) waker?.soon()
    } catch (err) {
      log(`reap: ${err instanceof Error ? err.message : err}`)
    }
  }
  // On PGlite this process is the only instance: only jobs of a process that ran before it can be stranded,
  // and the reaper finds them within the first stale windows. After those it looks once a minute (each look
  // plans every partition of the job table; decisions "Issue 36").
  const startedAt = Date.now()
  const reapEvery = () =>
    !opts.databaseUrl && Date.now() - startedAt > 2 * (stale * 1000 + REAP_MS) ? REAP_IDLE_MS : REAP_MS
  let reaper: NodeJS.Timeout | undefined
  let reaping = true
  const nextReap = () => {
    if (!reaping) return
    reaper = setTimeout(() => void reap().finally(nextReap), reapEvery())
    reaper.unref()
  }
  nextReap()

  for (const job of registry.list()) {
    // A no-op for a queue that exists (pg-boss's create_queue ends at ON CONFLICT), as on a data dir made
    // from the build's snapshot, which holds these very queues (_queue-options.ts).
    await boss.createQueue(job.name, queueOptions(job) as any)
    if (runsHere(job, !!opts.databaseUrl)) {
      local.set(job.name, createLocalRunner(job, ctx))
      // PGlite: no other process sends it. PostgreSQL: the workers stay for jobs an older instance sent.
      if (!opts.databaseUrl) continue
    }
    const workers = Math.max(1, job.concurrency ?? 1)
    const ids: string[] = []
    workerIds.set(job.name, ids)
    for (let i = 0; i < workers; i++) {
      let self = ''
      self = await boss.work(
        job.name,
        { pollingIntervalSeconds: WORKER_BACKSTOP_SECONDS, batchSize: 1, includeMetadata: true },
        async (batch) => {
          // Fetch again as soon as this job ends: a backlog drains without waiting for the next probe.
          if (batch.length) boss.notifyWorker(self)
          for (const j of batch) {
            await own(job.name, j.id)
            try {
              await runJob(job, j.data, ctx, { id: j.id, retryCount: j.retryCount })
            } catch (err) {
              // pg-boss records the failure and the retry's time once this throws; the probe then reads it.
              waker?.soon()
              throw err
            }
          }
        },
      )
      ids.push(self)
    }
    // No singleton key: another instance's start must not swallow this one's catch-up run.
    if (job.runAtStart && !local.has(job.name)) await boss.send(job.name, {})
  }

  waker = createWaker({
    names: [...workerIds.keys()],
    wake,
    executeSql: (text, values) => opts.database.executeSql(text, values),
    schema,
    pollMs: Math.max(0.5, opts.pollSeconds) * 1000,
    watched: !opts.databaseUrl,
    onError: (err) => {
      lastErrorAt = Date.now()
      log(`probe: ${err instanceof Error ? err.message : err}`)
    },
  })
  waker.start()
  for (const [name, runner] of local) if (registry.get(name)?.runAtStart) runner.request()

  // The schedules (UTC). On PostgreSQL the instance that moves pg-boss's `version.cron_on` (unused without
  // its timekeeper) forward to a slot sends that slot's jobs, and any it moved over; the row lock makes
  // the UPDATEs of instances that race for a slot wait, then find it taken.
  const cron: Cron = startCron({
    jobs: registry.list().flatMap((j) => (j.schedule ? [{ name: j.name, schedule: j.schedule }] : [])),
    send: (name) => send(name, {}),
    claim: opts.databaseUrl
      ? (slot) => claimSlot(opts.database.executeSql.bind(opts.database), schema, slot)
      : undefined,
    log,
  })
  // PostgreSQL: a send on any instance wakes this one's workers of its queue (the payload is the queue's name).
  if (opts.databaseUrl) {
    const w = waker
    void opts.database
      .listen(jobsChannel, (name) => {
        if (workerIds.has(name)) wake(name)
      })
      .then((ok) => w.notified(ok))
  }

  return {
    boss,
    send,
    // A queue error in the last minute (lost connection, failed poll) shows as degraded, not down:
    // jobs are durable and resume once the database answers again.
    async state() {
      return Date.now() - lastErrorAt < 60_000 ? 'degraded' : 'ok'
    },
    stop: () => {
      reaping = false
      clearTimeout(reaper)
      cron.stop()
      waker?.stop()
      return Promise.all([...local.values()].map((r) => r.stop())).then(() =>
        boss.stop({ graceful: true, wait: true, timeout: 5000 }),
      )
    },
  }
}
