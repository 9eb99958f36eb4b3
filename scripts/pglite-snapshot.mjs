// A PGlite cluster with the committed migrations applied, made once per PGlite version and set of migrations
// and shipped in the build: a first boot on a new embedded database loads it instead of running initdb and
// every migration (together about three quarters of a first boot's CPU; decisions "Issue 36: hot paths and
// idle cost"). It holds no data of ours beyond the schema: no key, no secret, no queue. The migrations are
// applied as server/db/migrate.ts applies them (same split, same checksums in schema_migrations), so the boot's
// migrate() finds them applied and checks their checksums. nitro.config.ts emits it as
// chunks/pglite-initdb.tar.gz (#svc/pglite-snapshot is its URL); server/db/client.ts loads it into an empty
// data dir.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '..')
const sha256 = (text) => createHash('sha256').update(text).digest('hex')

/** The snapshot's bytes, made (a few seconds of CPU) or read from node_modules/.cache. */
export async function pgliteSnapshot() {
  const { version } = JSON.parse(readFileSync(resolve(root, 'node_modules/@electric-sql/pglite/package.json'), 'utf8'))
  const dir = resolve(root, 'server/db/migrations')
  const migrations = readdirSync(dir)
    .filter((n) => n.endsWith('.sql'))
    .sort((a, b) => a.localeCompare(b))
    .map((name) => ({ name, sql: readFileSync(resolve(dir, name), 'utf8') }))
  const key = sha256(JSON.stringify([version, migrations])).slice(0, 16)
  const cached = resolve(root, `node_modules/.cache/svc-pglite/snapshot-${key}.tar.gz`)
  if (existsSync(cached)) return readFileSync(cached)
  const { PGlite } = await import('@electric-sql/pglite')
  const pg = await PGlite.create()
  // The same table and rows as migrate.ts.
  await pg.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
  for (const m of migrations) {
    const statements = m.sql
      .split('--> statement-breakpoint')
      .map((s) => s.trim())
      .filter(Boolean)
    await pg.transaction(async (tx) => {
      for (const s of statements) await tx.exec(s)
      await tx.query('INSERT INTO schema_migrations (name, checksum) VALUES ($1, $2)', [m.name, sha256(m.sql)])
    })
  }
  const bytes = Buffer.from(await (await pg.dumpDataDir('gzip')).arrayBuffer())
  await pg.close()
  mkdirSync(dirname(cached), { recursive: true })
  writeFileSync(`${cached}.${process.pid}`, bytes)
  renameSync(`${cached}.${process.pid}`, cached)
  return bytes
}

/** Rollup: `#svc/pglite-snapshot` is the URL of the emitted chunks/pglite-initdb.tar.gz. */
export const pgliteSnapshotChunk = () => ({
  name: 'svc-pglite-snapshot',
  resolveId: (id) => (id === '#svc/pglite-snapshot' ? '\0svc-pglite-snapshot' : null),
  async load(id) {
    if (id !== '\0svc-pglite-snapshot') return null
    const ref = this.emitFile({
      type: 'asset',
      fileName: 'chunks/pglite-initdb.tar.gz',
      source: await pgliteSnapshot(),
    })
    return `export default import.meta.ROLLUP_FILE_URL_${ref}`
  },
})
