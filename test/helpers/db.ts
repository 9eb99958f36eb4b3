// Direct database access for tests that must simulate time passing (an expiry in the past). On PGlite
// the server must be stopped first: only one process may open its data directory.
import { openDatabase, type Database } from '~/db/client'

export async function withDatabase<T>(dataDir: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase({ url: process.env.DATABASE_URL, dataDir })
  try {
    return await fn(db)
  } finally {
    await db.close()
  }
}
