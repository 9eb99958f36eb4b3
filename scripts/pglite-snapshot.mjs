// A PGlite cluster with the committed migrations applied, made once per PGlite version and set of migrations
// and shipped in the build: a first boot on a new embedded database loads it instead of running initdb and
// every migration (together about three quarters of a first boot's CPU; decisions "Issue 36: hot paths and
// idle cost"). It holds no data of ours beyond the schema: no key, no secret, no instance, no job. The migrations
// are applied as server/db/migrate.ts applies them (same split, same checksums in schema_migrations), so the
// boot's migrate() finds them applied and checks their checksums. It also holds pg-boss's default schema
// (`pgboss`) with the queue of every job kind, made by pg-boss itself with the options jobs/_queue.ts gives
// them (jobs/_queue-options.ts, bundled here with the job files), so a first boot's createQueue calls find them
// made (decisions "Issue 36: first boot"). It is keyed by the PGlite and pg-boss versions, the migrations and
// the queue manifest. nitro.config.ts emits it as chunks/pglite-initdb.tar.gz (#svc/pglite-snapshot is its
// URL, `queues` its schema and manifest); server/db/snapshot.ts unpacks it into an empty data dir.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { NODE_BUNDLE } from './bundle-worker.mjs'
import { pluginFiles } from './plugin-files.mjs'

const root = resolve(import.meta.dirname, '..')
/** What this script makes beyond the inputs of the key; a change to it (2: no pg-boss cron queue) makes a new snapshot. */
const MADE = 2
const sha256 = (text) => createHash('sha256').update(text).digest('hex')
const versionOf = (pkg) => JSON.parse(readFileSync(resolve(root, `node_modules/${pkg}/package.json`), 'utf8')).version

/** The schema the snapshot's queues live in: pg-boss's default, which SVC_QUEUE_SCHEMA keeps unless set. */
export const QUEUE_SCHEMA = 'pgboss'

/**
 * The queue manifest of server/jobs (jobs/_queue-options.ts `queueManifest`): the job files and the options
 * function bundled by esbuild (our code inlined, packages external, #svc/* virtual modules stubbed: a job's
 * options never depend on them) and imported.
 */
export async function jobQueueManifest() {
  const { build } = await import('esbuild')
  const jobsDir = resolve(root, 'server/jobs')
  const files = pluginFiles(jobsDir)
  const contents = [
    `import { queueManifest } from ${JSON.stringify(resolve(jobsDir, '_queue-options.ts'))}`,
    ...files.map((n, i) => `import j${i} from ${JSON.stringify(resolve(jobsDir, n))}`),
    `export default queueManifest([${files.map((_, i) => `j${i}`).join(', ')}])`,
  ].join('\n')
  const outfile = resolve(root, `node_modules/.cache/svc-pglite/jobs-${process.pid}-${Date.now()}.mjs`)
  await build({
    stdin: { contents, resolveDir: root, loader: 'ts' },
    outfile,
    ...NODE_BUNDLE,
    logLevel: 'error',
    plugins: [
      {
        name: 'svc-virtual-stub',
        setup(b) {
          b.onResolve({ filter: /^#svc\// }, (a) => ({ path: a.path, namespace: 'svc-stub' }))
          b.onLoad({ filter: /.*/, namespace: 'svc-stub' }, () => ({ contents: 'export default ""', loader: 'js' }))
        },
      },
    ],
  })
  try {
    return (await import(pathToFileURL(outfile).href)).default
  } finally {
    const { rmSync } = await import('node:fs')
    rmSync(outfile, { force: true })
  }
}

/** The snapshot's bytes, made (a few seconds of CPU) or read from node_modules/.cache, and its queue manifest. */
export async function pgliteSnapshot() {
  const dir = resolve(root, 'server/db/migrations')
  const migrations = readdirSync(dir)
    .filter((n) => n.endsWith('.sql'))
    .sort((a, b) => a.localeCompare(b))
    .map((name) => ({ name, sql: readFileSync(resolve(dir, name), 'utf8') }))
  const manifest = await jobQueueManifest()
  const versions = [versionOf('@electric-sql/pglite'), versionOf('pg-boss')]
  const key = sha256(JSON.stringify([versions, migrations, QUEUE_SCHEMA, manifest, MADE])).slice(0, 16)
  const queues = { schema: QUEUE_SCHEMA, manifest }
  const cached = resolve(root, `node_modules/.cache/svc-pglite/snapshot-${key}.tar.gz`)
  if (existsSync(cached)) return { bytes: readFileSync(cached), queues }
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
  // pg-boss makes its schema and the queues as a boot would: through the same executeSql adapter as
  // db/client.ts, the queues of the jobs with their options. Neither supervision nor the timekeeper runs (a
  // boot runs no timekeeper either since the jobs' cron is ours, jobs/_cron.ts, so there is no cron queue):
  // no job, no schedule.
  const { default: PgBoss } = await import('pg-boss')
  const boss = new PgBoss({
    db: {
      executeSql: async (text, values) =>
        values?.length
          ? { rows: (await pg.query(text, values)).rows }
          : { rows: (await pg.exec(text)).at(-1)?.rows ?? [] },
    },
    schema: QUEUE_SCHEMA,
    supervise: false,
    schedule: false,
  })
  await boss.start()
  for (const options of JSON.parse(manifest)) await boss.createQueue(options.name, options)
  await boss.stop({ graceful: false, wait: true })
  const bytes = Buffer.from(await (await pg.dumpDataDir('gzip')).arrayBuffer())
  await pg.close()
  mkdirSync(dirname(cached), { recursive: true })
  writeFileSync(`${cached}.${process.pid}`, bytes)
  renameSync(`${cached}.${process.pid}`, cached)
  return { bytes, queues }
}

/**
 * Rollup: `#svc/pglite-snapshot` is the URL of the emitted chunks/pglite-initdb.tar.gz (default export) and
 * `queues` the schema and queue manifest it holds.
 */
export const pgliteSnapshotChunk = () => ({
  name: 'svc-pglite-snapshot',
  resolveId: (id) => (id === '#svc/pglite-snapshot' ? '\0svc-pglite-snapshot' : null),
  async load(id) {
    if (id !== '\0svc-pglite-snapshot') return null
    const { bytes, queues } = await pgliteSnapshot()
    for (const f of [resolve(root, 'server/db/migrations'), resolve(root, 'server/jobs')]) this.addWatchFile(f)
    const ref = this.emitFile({ type: 'asset', fileName: 'chunks/pglite-initdb.tar.gz', source: bytes })
    return `export default import.meta.ROLLUP_FILE_URL_${ref}\nexport const queues = ${JSON.stringify(queues)}`
  },
})
