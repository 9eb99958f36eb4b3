// Applies the committed drizzle-kit SQL files in name order, each in its own transaction, under an
// advisory lock so that several instances booting at once apply each file exactly once.
import { createHash } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { rowsOf, type Database } from './client'

export interface Migration {
  name: string
  sql: string
}

const LOCK_ID = 727001

export async function migrate(database: Database, migrations: Migration[]): Promise<string[]> {
  await database.executeSql(`CREATE TABLE IF NOT EXISTS schema_migrations (
    name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
  // Most boots find every migration applied (a restart, a data dir made from the build's snapshot): one read
  // then, instead of a locked transaction per file. Anything missing takes the locked path below.
  const known = new Map(
    rowsOf<{ name: string; checksum: string }>(
      await database.executeSql('SELECT name, checksum FROM schema_migrations'),
    ).map((r) => [r.name, r.checksum]),
  )
  const checksumOf = (m: Migration) => createHash('sha256').update(m.sql).digest('hex')
  if (migrations.every((m) => known.get(m.name) === checksumOf(m))) return []
  const applied: string[] = []
  for (const m of [...migrations].sort((a, b) => a.name.localeCompare(b.name))) {
    const checksum = checksumOf(m)
    const statements = m.sql
      .split('--> statement-breakpoint')
      .map((s) => s.trim())
      .filter(Boolean)
    const done = await database.tx(async (tx) => {
      await tx.execute(sql`SELECT pg_advisory_xact_lock(${LOCK_ID})`)
      const seen = rowsOf<{ checksum: string }>(
        await tx.execute(sql`SELECT checksum FROM schema_migrations WHERE name = ${m.name}`),
      )
      if (seen.length) {
        if (seen[0].checksum !== checksum) throw new Error(`[migrate] ${m.name} was edited after it was applied`)
        return false
      }
      for (const s of statements) await tx.execute(sql.raw(s))
      await tx.execute(sql`INSERT INTO schema_migrations (name, checksum) VALUES (${m.name}, ${checksum})`)
      return true
    })
    if (done) applied.push(m.name)
  }
  return applied
}
