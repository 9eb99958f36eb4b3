// On PostgreSQL, a database of the test file's own. Work that any server on a database may take (webhook
// deliveries, the requeue sweeps of stranded documents and builds) would otherwise be taken by the other test
// files' servers on the run's shared database, each with its own job queue and settings (a delivery sent
// without tracing, a document re-sent by a sweep that cannot see this server's failed jobs). On PGlite every
// server already has a database of its own: nothing is created and `env` is empty.
import { withDatabase } from './db'

export interface OwnDatabase {
  /** `{ DATABASE_URL }` for startServer / seedAgent on PostgreSQL; `{}` on PGlite. */
  env: Record<string, string>
  /** For withDatabase(dataDir, fn, on): this database (null on PGlite: the server's own). */
  on: { url: string | null }
  drop(): Promise<void>
}

export async function ownDatabase(tag: string): Promise<OwnDatabase> {
  const shared = process.env.DATABASE_URL
  if (!shared) return { env: {}, on: { url: null }, drop: async () => {} }
  const name = `svc_${tag}_${process.pid}_${Date.now().toString(36)}`
  const url = new URL(shared)
  url.pathname = `/${name}`
  await withDatabase('', (db) => db.executeSql(`CREATE DATABASE ${name}`))
  return {
    env: { DATABASE_URL: url.toString() },
    on: { url: url.toString() },
    drop: () =>
      withDatabase('', (db) => db.executeSql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
        .then(() => {})
        .catch(() => {}),
  }
}
