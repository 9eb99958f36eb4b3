// Two engines, one dialect: postgres.js when DATABASE_URL is set, PGlite (in-process PostgreSQL) otherwise.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ExtractTablesWithRelations } from 'drizzle-orm'
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core'
import { createInvalidationBus, INVALIDATE_CHANNEL, type InvalidationBus } from './bus'
import { fenced } from './commit-fence'
import { isEmptyDir, unpackSnapshot } from './snapshot'
import * as schema from './schema'

type Schema = typeof schema
export type Db = PgDatabase<PgQueryResultHKT, Schema>
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>
/** What domain code queries through: the pool, or the open transaction it was handed. */
export type Executor = Db | Tx

export interface Database {
  kind: 'pglite' | 'postgres'
  /** Set when this open made the embedded data dir from the build's snapshot (a first boot). */
  fromSnapshot?: boolean
  db: Db
  /** Runs `fn` in one transaction. On PGlite transactions are serialised by the engine's own mutex;
   *  never call the outer `db` inside `fn` (it would wait for the transaction that waits for it). Inside a
   *  request with an Idempotency-Key the claim's fence ends the transaction (commit-fence.ts). */
  tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T>
  /** Raw SQL for the migrator, pg-boss's `db.executeSql` adapter and hot statements of fixed text (the chat
   *  turn's write); with values it is prepared like every parameterised query (SVC_PG_PREPARE). */
  executeSql(text: string, values?: unknown[]): Promise<{ rows: any[] }>
  /** `select 1`, failing after timeoutMs (default 2 s). */
  ping(timeoutMs?: number): Promise<void>
  close(): Promise<void>
  /** This process's connections by state (svc_db_pool_connections): active, idle, idle_in_transaction, and
   *  max, the pool's size. */
  poolStats(): Promise<Record<string, number>>
  /** Cache invalidation for this database's rows, across every instance that uses it (db/bus.ts). */
  bus: InvalidationBus
  /** LISTENs on `channel` (postgres.js: its listener connection, re-listened after a drop; PGlite: the engine's
   *  own notifications). Answers false when the LISTEN failed (a pooler that cannot LISTEN): the caller then
   *  polls as it would without notifications. */
  listen(channel: string, fn: (payload: string) => void): Promise<boolean>
}

export async function openDatabase(opts: {
  url?: string
  dataDir: string
  prepare?: boolean
  /** The URL (or path) of a PGlite snapshot to load into an empty data dir instead of running initdb. */
  snapshot?: string
}): Promise<Database> {
  return opts.url
    ? openPostgres(opts.url, opts.prepare ?? true)
    : openPglite(join(opts.dataDir, 'pglite'), opts.snapshot)
}

async function openPostgres(url: string, prepare: boolean): Promise<Database> {
  const { default: postgres } = await import('postgres')
  const { drizzle } = await import('drizzle-orm/postgres-js')
  // The process's connections carry a name of their own, so pg_stat_activity can tell them from other
  // instances' (poolStats).
  const applicationName = `svc-${process.pid}-${randomBytes(4).toString('hex')}`
  const sql = postgres(url, {
    max: POOL_MAX,
    onnotice: () => {},
    connect_timeout: 5,
    idle_timeout: 30,
    connection: { application_name: applicationName },
  })
  // Drizzle prepares only statements named with .prepare(): every other parameterised query would be
  // parsed and planned again on each call (about 1 ms for the conversation list). postgres.js keeps one
  // prepared statement per query text and connection; connections are recycled after 30 s idle. One rule
  // for every query that passes here, named or not: prepared when it has parameters and SVC_PG_PREPARE
  // allows it, never otherwise (a pooler in transaction mode cannot keep them).
  const client = new Proxy(sql, {
    get(target, prop, receiver) {
      if (prop !== 'unsafe') return Reflect.get(target, prop, receiver)
      return (query: string, params?: any[], options?: object) =>
        target.unsafe(query, params, { ...options, prepare: prepare && !!params?.length })
    },
  })
  const db = drizzle({ client, schema }) as unknown as Db
  const bus = createInvalidationBus()
  // LISTEN on its own connection, which postgres.js re-opens (and re-listens) after a drop; a failure at
  // boot is logged, not fatal: the caches' TTL still bounds what another instance's change may leave.
  // No NOTIFY is sent from here: the row triggers of migration 0010 notify, in the writer's transaction,
  // for every change a cache depends on, so a publish only has to reach this process's own caches.
  await sql
    .listen(INVALIDATE_CHANNEL, (payload) => bus.receive(payload))
    .catch((err: Error) => console.error(`[bus] LISTEN ${INVALIDATE_CHANNEL} failed: ${err.message}`))
  return {
    kind: 'postgres',
    bus,
    db,
    listen: (channel, fn) =>
      listening(
        channel,
        sql.listen(channel, (payload) => fn(payload)),
      ),
    tx: (fn) => db.transaction(fenced(fn) as any) as any,
    async executeSql(text, values) {
      // Without values: the simple protocol, which alone accepts multi-statement scripts (migrations).
      const rows = values?.length ? await client.unsafe(text, values as any[]) : await sql.unsafe(text)
      return { rows: Array.isArray(rows) ? [...rows] : [] }
    },
    async ping(timeoutMs = 2000) {
      await withTimeout(sql`select 1`, timeoutMs)
    },
    async poolStats() {
      // One row per state of this process's connections but the one asking.
      const rows = await withTimeout(
        sql`SELECT coalesce(state, 'unknown') AS state, count(*)::int AS n FROM pg_stat_activity
          WHERE application_name = ${applicationName} AND pid <> pg_backend_pid() GROUP BY 1`,
        1000,
      )
      const out: Record<string, number> = { max: POOL_MAX }
      for (const r of rows) out[String(r.state).replace(/[^a-z]+/g, '_')] = Number(r.n)
      return out
    },
    close: () => sql.end({ timeout: 5 }),
  }
}

/** Connections of the postgres.js pool. */
const POOL_MAX = 10

/** How long open transactions vouch for the embedded engine in the health probe (see ping). */
const BUSY_TRUST_MS = 30_000

/** Whether a LISTEN took: a failure is logged and answered false, so the caller falls back to polling. */
function listening(channel: string, subscribed: Promise<unknown>): Promise<boolean> {
  return subscribed.then(
    () => true,
    (err: Error) => {
      console.error(`[db] LISTEN ${channel} failed: ${err.message}`)
      return false
    },
  )
}

async function openPglite(dir: string, snapshot?: string): Promise<Database> {
  const { PGlite } = await import('@electric-sql/pglite')
  const { drizzle } = await import('drizzle-orm/pglite')
  // A new data dir starts from the build's snapshot (initdb and the migrations done: most of a first boot's CPU;
  // decisions "Issue 36: hot paths and idle cost"), unpacked by node:fs onto the disk (snapshot.ts); PGlite then
  // opens it as it opens any existing data dir (decisions "Issue 36: first boot"). Without the file (a test
  // opening PGlite from the sources), initdb runs as before and migrate() applies every migration.
  const file = snapshot && !existsSync(join(dir, 'PG_VERSION')) ? snapshotFile(snapshot) : undefined
  if (file && isEmptyDir(dir)) unpackSnapshot(readFileSync(file), dir)
  mkdirSync(dir, { recursive: true })
  // A directory that holds files but no cluster (not ours to clear): PGlite loads the snapshot into it as before.
  const fromSnapshot = !!file
  const pg =
    file && !existsSync(join(dir, 'PG_VERSION'))
      ? await PGlite.create(dir, { loadDataDir: new Blob([readFileSync(file)]) })
      : await PGlite.create(dir)
  const db = drizzle({ client: pg, schema }) as unknown as Db
  // Transactions of this process now running (each holds the engine's mutex while it runs), and since when
  // at least one has been.
  let open = 0
  let busySince = 0
  return {
    kind: 'pglite',
    fromSnapshot,
    // One process owns an embedded database: invalidations stay in this process.
    bus: createInvalidationBus(),
    db,
    listen: (channel, fn) =>
      listening(
        channel,
        pg.listen(channel, (payload) => fn(payload)),
      ),
    async tx(fn) {
      if (open++ === 0) busySince = Date.now()
      try {
        return await (db.transaction(fenced(fn) as any) as any)
      } finally {
        open--
      }
    },
    async executeSql(text, values) {
      // pg-boss sends multi-statement scripts without parameters (schema set-up, migrations):
      // only the simple-query protocol (`exec`) accepts those.
      if (values?.length) return { rows: (await pg.query(text, values)).rows }
      const results = await pg.exec(text)
      return { rows: results.at(-1)?.rows ?? [] }
    },
    async ping(timeoutMs = 2000) {
      // A transaction of this process holds the engine's mutex (a 50,000-row import: seconds): the engine is
      // evidently up, and `select 1` would only measure the queue behind it (health read down, issue 30).
      // Not for ever: after BUSY_TRUST_MS of unbroken transactions the probe queues like any query again, so
      // a transaction that never ends shows as down.
      if (open > 0 && Date.now() - busySince < BUSY_TRUST_MS) return
      await withTimeout(pg.query('select 1'), timeoutMs)
    },
    // One connection, busy while a transaction of this process holds it.
    poolStats: async () => ({ max: 1, active: open > 0 ? 1 : 0, idle: open > 0 ? 0 : 1 }),
    close: () => pg.close(),
  }
}

/** The snapshot's path when it exists (a URL from the build, or a path). */
function snapshotFile(snapshot: string): string | undefined {
  const path = snapshot.startsWith('file:') ? fileURLToPath(snapshot) : snapshot
  return existsSync(path) ? path : undefined
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('database ping timed out')), ms)
    }),
  ])
}

/** `execute()` answers an array on postgres.js and `{rows}` on PGlite. */
export function rowsOf<T = Record<string, unknown>>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[]
}
