// Runs the built server (.output) as a black box: a child process on a free port with its own data dir.
import type { ChildProcess } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { cpSync, existsSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs'
import { createServer as createNetServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ENTRY, spawnServer, type Exit } from '../../scripts/spawn-server.mjs'

export interface TestServer {
  origin: string
  base: string
  masterKey: string
  dataDir: string
  logs: string[]
  child: ChildProcess
  /** The PostgreSQL schema of its job queue (SVC_QUEUE_SCHEMA). */
  queueSchema: string
  /** Resolves with how it exited (code 0 after a clean SIGTERM). */
  stop(signal?: NodeJS.Signals): Promise<Exit>
}

export { ENTRY }

/** One blob directory per test database, the same in every test process. */
const sharedBlobDir = (databaseUrl: string) =>
  join(tmpdir(), `svc-test-blobs-${createHash('sha256').update(databaseUrl).digest('hex').slice(0, 12)}`)

/** The secret every test server uses unless told otherwise (the PGlite template is made with it). */
const DEFAULT_SECRET = 'test-secret-' + 'x'.repeat(40)

/**
 * A migrated, empty PGlite data dir made once per build (test/setup/global.ts) and copied into each new
 * test server's data dir: a fresh PGlite spends 6–13 s of CPU on migrations and the queue's schema, a
 * copy boots in about half that. Keyed by the build, so a rebuilt server never starts from an old schema.
 */
export function pgliteTemplateDir(): string {
  const built = statSync(ENTRY)
  const key = createHash('sha256').update(`${ENTRY}:${built.mtimeMs}:${built.size}`).digest('hex').slice(0, 12)
  return join(tmpdir(), `svc-test-pglite-template-${key}`)
}

/** Makes the template unless this build already has one (boots a server on a fresh dir, stops it cleanly). */
export async function preparePgliteTemplate(): Promise<void> {
  const dir = pgliteTemplateDir()
  if (existsSync(dir)) return
  const server = await startServer({ env: { DATABASE_URL: undefined }, template: false })
  await server.stop('SIGTERM')
  const staged = `${dir}.${process.pid}`
  rmSync(staged, { recursive: true, force: true })
  cpSync(server.dataDir, staged, { recursive: true })
  try {
    renameSync(staged, dir)
  } catch {
    rmSync(staged, { recursive: true, force: true })
  }
}

export function newMasterKey() {
  return 'svc_mk_live_' + randomBytes(36).toString('base64url')
}

/**
 * Data dirs this process made, removed when it exits (not at stop: a test may start a server again on the
 * dir it stopped). Each holds a PGlite of 70–170 MB; a run left hundreds behind and filled the disk.
 */
const madeDirs = new Set<string>()
process.once('exit', () => {
  for (const dir of madeDirs) rmSync(dir, { recursive: true, force: true })
})

export async function startServer(
  opts: {
    dataDir?: string
    env?: Record<string, string | undefined>
    masterKey?: string
    secret?: string
    /** Start a new PGlite from the migrated template when there is one (default true). */
    template?: boolean
  } = {},
): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-test-'))
  if (!opts.dataDir) madeDirs.add(dataDir)
  const masterKey = opts.masterKey ?? newMasterKey()
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    SVC_DATA_DIR: dataDir,
    SVC_MASTER_KEY: masterKey,
    SVC_SECRET: opts.secret ?? DEFAULT_SECRET,
    SVC_JOB_POLL_SECONDS: '0.5',
    // On PostgreSQL every test server shares one queue, so any of them may run another's job (a build,
    // a crawl): they must all be configured alike, including the exemption for the test's own sites.
    SVC_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
    // Webhook retries after seconds instead of minutes. On PostgreSQL any test server may send any
    // server's deliveries, so they all share it.
    SVC_WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1',
    // ...and any of them may ingest another's upload, so on PostgreSQL they share one blob directory
    // (what a multi-instance deployment does with a shared mount).
    ...(process.env.DATABASE_URL ? { SVC_BLOB_DIR: sharedBlobDir(process.env.DATABASE_URL) } : {}),
    ...opts.env,
  }
  // On PostgreSQL each test server has a job queue of its own, keyed by its data dir (a restart on the same
  // data dir resumes its jobs): a server a test stops or kills must not take another test's build or
  // delivery with it. Instances that must share their jobs name one SVC_QUEUE_SCHEMA.
  if (env.DATABASE_URL && !env.SVC_QUEUE_SCHEMA)
    env.SVC_QUEUE_SCHEMA = `pgboss_t${createHash('sha256').update(dataDir).digest('hex').slice(0, 12)}`
  // A new embedded database starts as a copy of the migrated template (made with the default secret).
  const embedded = !env.DATABASE_URL
  if (!opts.dataDir && embedded && opts.template !== false && !opts.secret) {
    const template = pgliteTemplateDir()
    if (existsSync(template)) cpSync(template, dataDir, { recursive: true })
  }
  const { origin, child, logs, stop } = await spawnServer({ env: env as NodeJS.ProcessEnv, cwd: dataDir, entry: ENTRY })
  return {
    origin,
    base: `${origin}/v1`,
    masterKey,
    dataDir,
    logs,
    child,
    queueSchema: env.SVC_QUEUE_SCHEMA ?? 'pgboss',
    stop,
  }
}

/** A loopback port free right now: for servers that must know their public URL before they start (Twilio signs it). */
export const freePort = () =>
  new Promise<number>((ok, fail) => {
    const s = createNetServer()
    s.once('error', fail)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => ok(port))
    })
  })
