// Direct database access for tests that must simulate time passing (an expiry in the past). On PGlite
// the server must be stopped first: only one process may open its data directory.
import { openDatabase, type Database } from '~/db/client'

/** `on.url`: the database of the server in question (null: its PGlite); without `on`, the run's DATABASE_URL. */
export async function withDatabase<T>(
  dataDir: string,
  fn: (db: Database) => Promise<T>,
  on?: { url: string | null },
): Promise<T> {
  const url = on ? (on.url ?? undefined) : process.env.DATABASE_URL
  const db = await openDatabase({ url, dataDir })
  try {
    return await fn(db)
  } finally {
    await db.close()
  }
}
