// A job kind is one file under server/jobs/ exporting defineJob({...}). Handlers must be idempotent:
// pg-boss delivers at least once (a crash after the work and before the ack runs it again).
import { type SQL, sql } from 'drizzle-orm'
import type { Config } from '~/config'
import type { Database } from '~/db/client'
import type { Registries } from './registries'
import type PgBoss from 'pg-boss'
import type { BlobStore } from './blob-store'
import type { Providers } from './providers'

export interface JobContext {
  database: Database
  /** Enqueue follow-up work from inside a job. */
  send(
    name: string,
    data?: object,
    options?: { singletonKey?: string; startAfter?: number | Date },
  ): Promise<string | null>
  log(message: string, extra?: Record<string, unknown>): void
  /** Plugin registries and configuration, for jobs that call providers (builds, summaries, deliveries). */
  registries: Registries
  /** The configured chat engine, mailer and telephony provider. */
  providers: Providers
  config: Config
  /** Original uploads (knowledge-base files). */
  blobs: BlobStore
}

export interface JobDefinition<D extends object = any> {
  name: string
  /** cron (UTC) for recurring jobs, e.g. sweeps; omitted for on-demand kinds. */
  schedule?: string
  /** Also run once when a process starts its queue (sweeps catch up after downtime). */
  runAtStart?: boolean
  retryLimit?: number
  retryDelaySeconds?: number
  /** Concurrent handlers in this process. */
  concurrency?: number
  /** How long one delivery may run before pg-boss expires (and retries) it; pg-boss's default is 15 minutes. */
  expireInSeconds?: number
  /**
   * pg-boss queue policy. `short` keeps at most one job of the queue waiting (a send while one waits is
   * dropped), which lets a sweep re-send itself with startAfter for a sub-minute cadence: the cron tick and
   * every instance's start-up run fold into the one waiting link instead of starting chains of their own.
   */
  policy?: 'standard' | 'short'
  run(data: D, ctx: JobContext, meta: { id: string; retryCount: number }): Promise<void>
}

export const defineJob = <D extends object>(job: JobDefinition<D>) => job

/** The job queue of this process (pg-boss on the same database; jobs/_queue.ts). */
export interface Queue {
  boss: PgBoss
  send: JobContext['send']
  state(): Promise<'ok' | 'degraded'>
  stop(): Promise<void>
}

/** The queue's job table (SVC_QUEUE_SCHEMA, a validated SQL name), for the operator's counts and the sweeps. */
export const jobTable = (schema: string) => sql`${sql.identifier(schema)}.job`

/**
 * The jobs of queue `name` sent for one row (their data's `key` equals `id`) in the given states, as a
 * FROM … WHERE for EXISTS or count(*). The table is partitioned by queue name; the name keeps the scan
 * to one partition.
 */
const jobsOf = (schema: string, name: string, key: string, id: SQL | unknown, states: SQL) =>
  sql`FROM ${jobTable(schema)} j WHERE j.name = ${name} AND j.data->>(${key}::text) = ${id} AND j.state IN ${states}`

/** True while a job of `name` for the row is waiting, due for retry or running: the queue will finish it. */
export const hasLiveJob = (schema: string, name: string, key: string, id: SQL | unknown) =>
  sql`EXISTS (SELECT 1 ${jobsOf(schema, name, key, id, sql`('created', 'retry', 'active')`)})`

/** How many jobs of `name` for the row ended failed, their retries spent. */
export const failedJobCount = (schema: string, name: string, key: string, id: SQL | unknown) =>
  sql<number>`(SELECT count(*) ${jobsOf(schema, name, key, id, sql`('failed')`)})::int`
