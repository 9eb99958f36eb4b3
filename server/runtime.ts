// The composition root: builds the process's Runtime from the kit ports at boot. Everything that can be
// checked before serving is checked here, synchronously where possible: configuration, duplicate plugin
// names, and the configured providers (an unknown SVC_CHAT_ENGINE or SVC_MAIL stops the boot).
// Only server/plugins/10.boot.ts imports this file; the rest of the code reads the result through
// useRuntime() (~/kit/runtime).
import type { Config } from './config'
import { loadConfig } from './config'
import { openDatabase, type Database } from '~/db/client'
import { INVALIDATE_CHANNEL } from '~/db/bus'
import { migrate, type Migration } from '~/db/migrate'
import { configureQuotas } from '~/domain/limits/quotas'
import { readStoredConfig, applyConfig, startConfigPoller } from '~/domain/admin/config'
import { startWebhookPump } from '~/domain/webhooks/pump'
import { startOutbound } from '~/domain/calls/service'
import { retire } from '~/domain/calls/outbound'
import { stopRecordingPool } from '~/domain/calls/recording'
import { liveSessions } from '~/domain/calls/session'
import { setMetricsSources } from '~/kit/metrics'
import { startQueue } from '~/jobs/_queue'
import { queueManifest } from '~/jobs/_queue-options'
import { createAuditWriter } from '~/kit/audit-writer'
import { type BlobProvider, hostBlobStore } from '~/kit/blob-store'
import type { Capability } from '~/kit/capability'
import type { ChatEngine } from '~/kit/chat-engine'
import type { JobDefinition } from '~/kit/job'
import type { Mailer } from '~/kit/mailer'
import { ProviderConfigError, resolveProviders, type Providers } from '~/kit/providers'
import { createRateLimiter } from '~/kit/rate-limit'
import type { LoadedPlugin } from '~/kit/plugin-packages'
import { createRegistries, type Registries } from '~/kit/registries'
import type { Runtime } from '~/kit/runtime'
import type { SpeechProvider } from '~/kit/speech'
import type { Telephony } from '~/kit/telephony'
import type { VoiceProvider } from '~/kit/voice'

/** What the build generates from the folders (virtual manifests in nitro.config.ts). */
export interface Installed {
  migrations: Migration[]
  /** The URL of a migrated PGlite snapshot, loaded into an empty embedded data dir instead of running initdb. */
  pgliteSnapshot?: string
  /** The queue schema that snapshot holds made, and its queues (scripts/pglite-snapshot.mjs). */
  pgliteSnapshotQueues?: { schema: string; manifest: string }
  jobs: JobDefinition[]
  capabilities: Capability[]
  chat: ChatEngine[]
  voice: VoiceProvider[]
  telephony: Telephony[]
  speech: SpeechProvider[]
  mail: Mailer[]
  blob: BlobProvider[]
  /** Each plugin's file (e.g. capabilities/order.ts), in the lists' order: boot errors name it. */
  files?: Partial<Record<PluginKind, readonly string[]>>
}

type PluginKind = 'capabilities' | 'chat' | 'voice' | 'telephony' | 'speech' | 'mail' | 'blob'

export interface Prepared {
  config: Config
  registries: Registries
  providers: Providers
}

/**
 * The synchronous part: throws on bad configuration, a plugin that fails its boot checks, a duplicate
 * plugin name or an unknown provider. In-tree plugins register first, then the SVC_PLUGINS packages
 * (loaded beforehand by loadPluginPackages) through the same registries; providers are chosen last, so
 * SVC_SPEECH may name a packaged provider.
 */
export function prepareRuntime(
  installed: Installed,
  config: Config = loadConfig(),
  packages: readonly LoadedPlugin[] = [],
): Prepared {
  configureQuotas(config.quotas)
  const registries = createRegistries()
  const files = installed.files ?? {}
  registries.capabilities.registerAll(installed.capabilities, files.capabilities)
  registries.chat.registerAll(installed.chat, files.chat)
  registries.voice.registerAll(installed.voice, files.voice)
  registries.telephony.registerAll(installed.telephony, files.telephony)
  registries.speech.registerAll(installed.speech, files.speech)
  registries.mail.registerAll(installed.mail, files.mail)
  registries.blob.registerAll(installed.blob, files.blob)
  for (const { plugin, origin } of packages) {
    const from = (list: readonly unknown[] | undefined) => (list ?? []).map(() => origin)
    const { chat, voice, telephony, speech, mail, blob } = plugin.providers ?? {}
    registries.capabilities.registerAll(plugin.capabilities ?? [], from(plugin.capabilities))
    registries.chat.registerAll(chat ?? [], from(chat))
    registries.voice.registerAll(voice ?? [], from(voice))
    registries.telephony.registerAll(telephony ?? [], from(telephony))
    registries.speech.registerAll(speech ?? [], from(speech))
    registries.blob.registerAll(blob ?? [], from(blob))
    // A packaged mailer is typed against the kit, which does not know the host's database (kit/mailer.ts).
    registries.mail.registerAll((mail ?? []) as readonly Mailer[], from(mail))
  }
  return { config, registries, providers: resolveProviders(registries, config) }
}

/** The SVC_BLOB_DRIVER provider's store; a provider that cannot open it stops the boot with one line. */
async function openBlobStore(provider: BlobProvider, config: Config) {
  try {
    return hostBlobStore(await provider.open({ url: config.blobUrl, dir: config.blobDir }))
  } catch (err) {
    const why = String(err instanceof Error ? err.message : err).split('\n')[0]
    throw new ProviderConfigError(`[config] SVC_BLOB_DRIVER="${provider.name}": the store did not open: ${why}`)
  }
}

/** The asynchronous part: database, migrations, queue, limiters, audit writer and webhook pump. */
export async function buildRuntime(
  { config, registries, providers }: Prepared,
  installed: Installed,
): Promise<Runtime> {
  if (config.masterKeyFile)
    console.log(
      `[boot] master key: ${config.masterKeyFile} (generated for development; set SVC_MASTER_KEY in production)`,
    )
  // decisions "Tracing": the SDK is loaded only when an OTLP endpoint is configured; off, nothing is loaded.
  if (config.tracing && !stopTracing) {
    const { startTracing } = await import('~/kit/tracing-sdk')
    stopTracing = startTracing(config.tracing)
  }
  const t0 = performance.now()
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    prepare: config.pgPrepare,
    snapshot: installed.pgliteSnapshot,
  })
  setMetricsSources({ callsActive: () => liveSessions.size, dbPool: () => database.poolStats() })
  const t1 = performance.now()
  const applied = await migrate(database, installed.migrations)
  if (applied.length) console.log(`[boot] applied migrations: ${applied.join(', ')}`)
  if (database.fromSnapshot) await keepSnapshotQueues(database, installed, config.queueSchema)
  const t2 = performance.now()
  const blobs = await openBlobStore(providers.blob, config)
  const queue = await startQueue({
    database,
    databaseUrl: config.databaseUrl,
    jobs: installed.jobs,
    pollSeconds: config.jobPollSeconds,
    registries,
    providers,
    config,
    blobs,
  })
  const t3 = performance.now()
  let redis: unknown
  if (config.redisUrl) {
    const { default: Redis } = await import('ioredis')
    const client = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 })
    // Redis down: the limiters count in memory meanwhile (kit/rate-limit.ts); say so once a minute, not per retry.
    let saidAt = 0
    client.on('error', (err: Error) => {
      if (Date.now() - saidAt < 60_000) return
      saidAt = Date.now()
      console.error(`[redis] ${err.message} (rate limits count per instance until it is back)`)
    })
    redis = client
    bridgeBusToRedis(database, config.redisUrl, redis as InstanceType<typeof Redis>, Redis)
    redisClients.add(redis as InstanceType<typeof Redis>)
  }
  const runtime: Runtime = {
    config,
    database,
    queue,
    registries,
    providers,
    rateLimiter: createRateLimiter({ redis, prefix: 'rl' }),
    authFailureLimiter: createRateLimiter({ redis, prefix: 'rl-auth' }),
    hourlyLimiter: createRateLimiter({ redis, prefix: 'rl-hour', duration: 3600 }),
    audit: createAuditWriter(database),
    blobs,
    webhooks: startWebhookPump({ database, config, intervalMs: config.jobPollSeconds * 1000 }),
    startedAt: new Date(),
  }
  // The operator's stored defaults (platform_config) apply before the first request, then every few seconds.
  applyConfig(runtime, await readStoredConfig(database.db))
  configStops.set(runtime, startConfigPoller(runtime))
  outboundStops.set(runtime, startOutbound(runtime))
  // Where a boot spends its time (decisions "Issue 36": a first boot on a fresh embedded database).
  const s = (a: number, b: number) => ((b - a) / 1000).toFixed(1)
  console.log(
    `[boot] ready on ${database.kind === 'pglite' ? `embedded PGlite (${config.dataDir})` : 'PostgreSQL'}: ${config.publicUrl}/v1 (database ${s(t0, t1)} s, migrations ${s(t1, t2)} s, queue ${s(t2, t3)} s, rest ${s(t3, performance.now())} s)`,
  )
  return runtime
}

/**
 * A data dir just made from the build's snapshot holds pg-boss's schema with the queues of the build's jobs
 * (scripts/pglite-snapshot.mjs). Kept when they are this process's queues in this process's schema; otherwise
 * (SVC_QUEUE_SCHEMA set to another schema, or jobs that differ from the build's) the schema is dropped before
 * pg-boss starts, so the queue schema is the one pg-boss makes itself, as without a snapshot.
 */
async function keepSnapshotQueues(database: Database, installed: Installed, queueSchema: string) {
  const made = installed.pgliteSnapshotQueues
  if (!made) return
  if (made.schema === queueSchema && made.manifest === queueManifest(installed.jobs)) return
  console.log(`[boot] the snapshot's queue schema ${made.schema} is not this process's queues: dropped`)
  await database.executeSql(`DROP SCHEMA IF EXISTS ${made.schema} CASCADE`)
}

/** Invalidations also travel over Redis pub/sub (a subscriber needs its own connection). */
function bridgeBusToRedis(
  database: Database,
  url: string,
  pub: { publish(c: string, m: string): Promise<unknown> },
  Redis: any,
) {
  const sub = new Redis(url, { maxRetriesPerRequest: null })
  sub.on('error', () => {})
  sub.subscribe(INVALIDATE_CHANNEL).catch((err: Error) => console.error(`[bus] Redis SUBSCRIBE failed: ${err.message}`))
  sub.on('message', (_channel: string, message: string) => database.bus.receive(message))
  database.bus.addTransport((payload) => pub.publish(INVALIDATE_CHANNEL, payload))
  redisClients.add(sub)
}
/** Redis connections to close at shutdown (the limiters' client and the bus subscriber). */
const redisClients = new Set<{ disconnect(): void }>()
/** The outbound service of each runtime (heartbeat, call reconciliation, the simulated network). */
const outboundStops = new WeakMap<Runtime, () => void>()
/** The platform_config poller of each runtime (domain/admin/config.ts). */
const configStops = new WeakMap<Runtime, () => void>()
/** Flushes the spans still batched and stops the exporter (kit/tracing-sdk.ts); unset while tracing is off. */
let stopTracing: (() => Promise<void>) | undefined

/**
 * Shutdown in reverse order of dependence; each part is stopped even when another fails. Called by Nitro's
 * `close` hook once the requests in flight have been answered (plugins/05.shutdown.ts): webhook leases not
 * finished in 2 s are given back, the audit rows flushed, pg-boss stopped gracefully (its running jobs get
 * 5 s, then are failed so that another instance retries them), this instance leaves the live set, and the
 * database closes.
 */
export async function stopRuntime(runtime: Runtime | undefined) {
  // Recordings being finished get their MP3 first (the drain has let the sessions end), then the threads go.
  await stopRecordingPool(5_000)
  if (runtime) outboundStops.get(runtime)?.()
  if (runtime) configStops.get(runtime)?.()
  await runtime?.webhooks.stop().catch(() => {})
  await runtime?.audit.stop().catch(() => {})
  await runtime?.queue.stop().catch(() => {})
  if (runtime) await retire(runtime.database.db).catch(() => {})
  for (const client of redisClients) client.disconnect()
  redisClients.clear()
  await runtime?.database.close().catch(() => {})
  // Last, so the spans of the jobs and deliveries stopped above are exported too.
  await stopTracing?.().catch(() => {})
}
