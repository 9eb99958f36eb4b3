// One valibot-checked reading of the environment (pitfall 9: never runtimeConfig/destr for secrets).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { join, resolve } from 'node:path'
import * as v from 'valibot'
import { isValidAllowEntry } from '~/lib/ip'
import { parseS3Url, type S3Location } from '~/kit/blob-store'
import { RATE_LIMIT_NAMES } from '~/kit/rate-limit'

/** decisions "Idle conversations": seconds without a new turn before an open text conversation is abandoned. */
export const CONVERSATION_IDLE_SECONDS = { min: 10, max: 2_592_000, default: 1800 } as const
/** decisions "Widget abuse": widget conversations per agent per UTC day (GET/PATCH /admin/config). */
export const WIDGET_CONVERSATIONS_PER_DAY = { min: 1, max: 1_000_000, default: 2_000 } as const
/** decisions "Widget abuse": voice-chat minutes per agent per UTC day (GET/PATCH /admin/config). */
export const VOICE_CHAT_MINUTES_PER_DAY = { min: 1, max: 1_000_000, default: 600 } as const
/** decisions "Voice sessions end": a voice chat ends after this many seconds in all, whatever its audio. */
export const VOICE_CHAT_MAX_SECONDS = 600

const idleMessage = `SVC_CONVERSATION_IDLE_SECONDS is a whole number of seconds from ${CONVERSATION_IDLE_SECONDS.min} to ${CONVERSATION_IDLE_SECONDS.max}`

/** `a=1,b=2` → {a: 1, b: 2} (SVC_RATE_LIMITS, SVC_QUOTAS). */
const counts = (list: string): Record<string, number> =>
  Object.fromEntries(
    list
      .split(',')
      .filter((x) => x.trim())
      .map((x) => {
        const [k, n] = x.split('=')
        return [k.trim(), Number(n)]
      }),
  )

const Env = v.object({
  PORT: v.optional(v.pipe(v.string(), v.regex(/^\d+$/)), '3000'),
  HOST: v.optional(v.string(), '127.0.0.1'),
  DATABASE_URL: v.optional(
    v.pipe(v.string(), v.regex(/^postgres(ql)?:\/\//, 'DATABASE_URL must start with postgres://')),
  ),
  SVC_DATA_DIR: v.optional(v.string(), '.data'),
  SVC_ENV: v.optional(v.picklist(['development', 'production', 'test']), 'development'),
  SVC_MASTER_KEY: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^svc_mk_live_.{48,}$/, 'SVC_MASTER_KEY must be svc_mk_live_ followed by at least 48 characters'),
    ),
  ),
  SVC_SECRET: v.optional(v.pipe(v.string(), v.minLength(32, 'SVC_SECRET must be at least 32 characters'))),
  // A scrape-only credential for GET /metrics (decisions "Prometheus metrics"), so a scraper need not hold
  // the master key.
  SVC_METRICS_TOKEN: v.optional(
    v.pipe(v.string(), v.regex(/^\S{32,512}$/, 'SVC_METRICS_TOKEN must be 32 to 512 characters without spaces')),
  ),
  REDIS_URL: v.optional(v.string()),
  // decisions "Tracing": OpenTelemetry is on when the standard endpoint is set (OTLP over HTTP). The exporter
  // reads the other OTEL_EXPORTER_OTLP_* variables itself (headers, timeout, compression).
  OTEL_EXPORTER_OTLP_ENDPOINT: v.optional(
    v.pipe(v.string(), v.url('OTEL_EXPORTER_OTLP_ENDPOINT is a URL, e.g. http://collector:4318')),
  ),
  OTEL_SERVICE_NAME: v.optional(v.pipe(v.string(), v.minLength(1)), 'svc'),
  // Prepared statements on PostgreSQL (on by default); false behind a pooler in transaction mode (PgBouncer).
  SVC_PG_PREPARE: v.optional(v.picklist(['true', 'false']), 'true'),
  // Uploaded originals (fs driver). Instances that share one PostgreSQL must share this directory too:
  // any of them may run the ingest job of another's upload.
  SVC_BLOB_DIR: v.optional(v.pipe(v.string(), v.minLength(1))),
  // Where blobs go (decisions "Blob storage"): fs under SVC_BLOB_DIR, s3 at SVC_BLOB_URL, or a plugin's provider
  // (https://KEY_ID:SECRET@host/bucket?region=…, any S3-compatible store).
  SVC_BLOB_DRIVER: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[a-z][a-z0-9_-]{0,63}$/, "SVC_BLOB_DRIVER is a blob provider name (fs, s3, or a plugin's)"),
    ),
    'fs',
  ),
  SVC_BLOB_URL: v.optional(v.string()),
  SVC_PUBLIC_URL: v.optional(v.pipe(v.string(), v.url())),
  SVC_ALLOW_PRIVATE_HOSTS: v.optional(v.string(), ''),
  SVC_CHAT_ENGINE: v.optional(v.string(), 'local'),
  SVC_TELEPHONY: v.optional(v.string(), 'simulated'),
  SVC_SPEECH: v.optional(v.string(), 'simulated'),
  // Each direction may use its own provider (decisions "Real-time voice"); both default to SVC_SPEECH.
  SVC_STT: v.optional(v.string()),
  SVC_TTS: v.optional(v.string()),
  SVC_MAIL: v.optional(v.string(), 'outbox'),
  // Plugin packages loaded at boot: npm package names or paths, comma-separated (kit/plugin-packages.ts).
  SVC_PLUGINS: v.optional(v.string(), ''),
  SMTP_URL: v.optional(
    v.pipe(v.string(), v.regex(/^smtps?:\/\/[^\s]+$/, 'SMTP_URL must be smtp://[user:pass@]host[:port] or smtps://…')),
  ),
  SMTP_FROM: v.optional(v.pipe(v.string(), v.minLength(3)), 'no-reply@localhost'),
  // Any limiter of RATE_LIMIT_NAMES: the API classes, widget_ip/widget_token, register/token/revoke/client_document (OAuth).
  SVC_RATE_LIMITS: v.optional(
    v.pipe(
      v.string(),
      v.regex(
        /^(\s*[a-z_]+=\d+\s*)(,\s*[a-z_]+=\d+\s*)*$|^$/,
        'SVC_RATE_LIMITS is a comma list of class=n, e.g. read=600,write=120,widget_ip=120',
      ),
      v.check(
        (list) => Object.keys(counts(list)).every((k) => (RATE_LIMIT_NAMES as string[]).includes(k)),
        `SVC_RATE_LIMITS names a class other than ${RATE_LIMIT_NAMES.join(', ')}`,
      ),
    ),
    '',
  ),
  SVC_QUOTAS: v.optional(
    v.pipe(
      v.string(),
      v.regex(
        /^(\s*[a-z_]+=\d+\s*)(,\s*[a-z_]+=\d+\s*)*$|^$/,
        'SVC_QUOTAS is a comma list of kind=n, e.g. chat_messages=100000',
      ),
    ),
    '',
  ),
  SVC_JOB_POLL_SECONDS: v.optional(v.pipe(v.string(), v.regex(/^\d+(\.\d+)?$/)), '1'),
  // The PostgreSQL schema of the job queue: deployments (or test servers) sharing one database with queues
  // of their own set it; instances that must share their jobs use the same one.
  SVC_QUEUE_SCHEMA: v.optional(
    v.pipe(v.string(), v.regex(/^[a-z_][a-z0-9_]{0,62}$/, 'SVC_QUEUE_SCHEMA must be a lower-case SQL name')),
    'pgboss',
  ),
  SVC_CONVERSATION_IDLE_SECONDS: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,7}$/, idleMessage),
      v.check(
        (s) => Number(s) >= CONVERSATION_IDLE_SECONDS.min && Number(s) <= CONVERSATION_IDLE_SECONDS.max,
        idleMessage,
      ),
    ),
    String(CONVERSATION_IDLE_SECONDS.default),
  ),
  // Test-only: the voice-chat ceiling of VOICE_CHAT_MAX_SECONDS, lowered so a test need not wait 10 minutes.
  SVC_VOICE_CHAT_MAX_SECONDS: v.optional(
    v.pipe(v.string(), v.regex(/^\d{1,4}$/, 'SVC_VOICE_CHAT_MAX_SECONDS is a whole number of seconds (test only)')),
    String(VOICE_CHAT_MAX_SECONDS),
  ),
  SVC_CALL_STALE_SECONDS: v.optional(v.pipe(v.string(), v.regex(/^\d+(\.\d+)?$/)), '15'),
  // Test-only knob: the most items a contact list holds (default 200000; decisions "Abuse and cost").
  SVC_CONTACT_LIST_MAX_ITEMS: v.optional(
    v.pipe(v.string(), v.regex(/^[1-9]\d{0,6}$/, 'SVC_CONTACT_LIST_MAX_ITEMS is a whole number from 1 to 9999999.')),
    '200000',
  ),
  // Test-only knob: how many running campaigns one pass of the minute sweep serves (default 1000).
  SVC_CAMPAIGN_SWEEP_BATCH: v.optional(
    v.pipe(v.string(), v.regex(/^[1-9]\d{0,5}$/, 'SVC_CAMPAIGN_SWEEP_BATCH is a whole number from 1 to 999999.')),
    '1000',
  ),
  // Test and operations knob: the webhook retry delays in seconds (decisions "Retries" by default).
  SVC_WEBHOOK_RETRY_SCHEDULE: v.optional(
    v.pipe(
      v.string(),
      v.regex(
        /^\s*\d+(\.\d+)?(\s*,\s*\d+(\.\d+)?)*\s*$/,
        'SVC_WEBHOOK_RETRY_SCHEDULE is a comma list of seconds, e.g. 1,1,1',
      ),
    ),
    '60,300,1800,7200,28800,86400',
  ),
  // Seconds between two sweeps for due scheduled knowledge syncs (decisions "Knowledge sync"); tests shorten it
  // to make several instances sweep at once.
  SVC_KB_SYNC_SWEEP_SECONDS: v.optional(
    v.pipe(
      v.string(),
      v.regex(
        /^([1-9]|[1-9]\d|[1-9]\d\d|[1-2]\d\d\d|3[0-5]\d\d|3600)$/,
        'SVC_KB_SYNC_SWEEP_SECONDS is a whole number of seconds from 1 to 3600',
      ),
    ),
    '60',
  ),
  // Test and operations knob: the whole-crawl time budget (decisions "Limits on hostile work": 10 minutes).
  SVC_CRAWL_DEADLINE_SECONDS: v.optional(
    v.pipe(v.string(), v.regex(/^\d+(\.\d+)?$/, 'SVC_CRAWL_DEADLINE_SECONDS is a number of seconds')),
    '600',
  ),
  // Recordings' MP3 encoder threads (decisions "Abuse and cost (issue 30)"): how many (default: one per core
  // but one, at least one), and the most call audio, in MB, that may wait for them before recordings stop.
  SVC_MP3_WORKERS: v.optional(
    v.pipe(v.string(), v.regex(/^([1-9]|[1-5]\d|6[0-4])$/, 'SVC_MP3_WORKERS is a whole number from 1 to 64')),
  ),
  SVC_MP3_BACKLOG_MB: v.optional(
    v.pipe(v.string(), v.regex(/^[1-9]\d{0,3}$/, 'SVC_MP3_BACKLOG_MB is a whole number of MB from 1 to 9999')),
    '64',
  ),
  // Test-only: every MP3 encoder thread throws after encoding this many chunks (a crashed thread).
  SVC_MP3_WORKER_CRASH_AFTER: v.optional(
    v.pipe(v.string(), v.regex(/^[1-9]\d{0,6}$/, 'SVC_MP3_WORKER_CRASH_AFTER is a whole number (test only)')),
  ),
  SVC_MCP_ALLOWED_ORIGINS: v.optional(v.string(), ''),
  // The development page /widget-demo (it shows any agent's widget token by id): off unless 1.
  SVC_WIDGET_DEMO: v.optional(v.picklist(['0', '1'], 'SVC_WIDGET_DEMO is 1 (serve /widget-demo) or 0'), '0'),
  // Graceful shutdown (decisions "Graceful shutdown"): the bound for live sessions and in-flight requests,
  // and a pause in the draining state before the port closes (for balancers that poll health).
  SVC_SHUTDOWN_TIMEOUT_SECONDS: v.optional(
    v.pipe(v.string(), v.regex(/^\d+(\.\d+)?$/, 'SVC_SHUTDOWN_TIMEOUT_SECONDS is a number of seconds')),
    '20',
  ),
  SVC_SHUTDOWN_DELAY_SECONDS: v.optional(
    v.pipe(v.string(), v.regex(/^\d+(\.\d+)?$/, 'SVC_SHUTDOWN_DELAY_SECONDS is a number of seconds')),
    '0',
  ),
  SVC_OAUTH_ACCESS_TTL_SECONDS: v.optional(v.pipe(v.string(), v.regex(/^\d+$/)), '3600'),
  SVC_OAUTH_REFRESH_GRACE_SECONDS: v.optional(v.pipe(v.string(), v.regex(/^\d+$/)), '30'),
  // Peers whose X-Forwarded-For / X-Forwarded-Proto are believed (decisions "Client IP"); empty trusts none.
  SVC_TRUSTED_PROXIES: v.optional(
    v.pipe(
      v.string(),
      v.check(
        (list) =>
          list
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
            .every(isValidAllowEntry),
        'SVC_TRUSTED_PROXIES is a comma list of IP addresses or CIDRs, e.g. 10.0.0.0/8,::1',
      ),
    ),
    '127.0.0.0/8,::1',
  ),
})

export interface Config {
  port: number
  host: string
  databaseUrl: string | undefined
  dataDir: string
  blobDir: string
  /** SVC_BLOB_DRIVER: the blob provider's name: fs (blobDir), s3 (blobS3, parsed from SVC_BLOB_URL) or a plugin's. */
  blobDriver: string
  blobS3: S3Location | undefined
  /** SVC_BLOB_URL as set (a packaged blob provider parses its own form). */
  blobUrl: string | null
  production: boolean
  masterKey: string
  masterKeyFile: string | undefined
  /** SVC_METRICS_TOKEN: a bearer that may read GET /metrics and nothing else. */
  metricsToken: string | undefined
  secret: string
  redisUrl: string | undefined
  /** OpenTelemetry tracing (decisions "Tracing"): set when OTEL_EXPORTER_OTLP_ENDPOINT is; null is off. */
  tracing: { serviceName: string } | null
  /** PostgreSQL: every parameterised query is a prepared statement (SVC_PG_PREPARE). */
  pgPrepare: boolean
  publicUrl: string
  /** False when publicUrl is the HOST:PORT default (then PORT=0 is completed from the listening socket). */
  publicUrlExplicit: boolean
  allowPrivateHosts: string[]
  chatEngine: string
  telephony: string
  speech: string
  /** Speech to text (SVC_STT, else SVC_SPEECH). */
  stt: string
  /** Text to speech (SVC_TTS, else SVC_SPEECH). */
  tts: string
  mail: string
  /** SVC_PLUGINS: plugin packages (npm names or paths) loaded at boot, in order. */
  plugins: string[]
  /** SVC_MAIL=smtp: the server (smtp:// or smtps://, credentials in the URL) and the From address. */
  smtpUrl: string | undefined
  smtpFrom: string
  jobPollSeconds: number
  /** The job queue's schema (SVC_QUEUE_SCHEMA, default pgboss). */
  queueSchema: string
  /**
   * Seconds without a new turn before an open api or widget conversation is abandoned (the idle sweep).
   * SVC_CONVERSATION_IDLE_SECONDS at boot; the operator's stored override replaces it in place (admin/config.ts).
   */
  conversationIdleSeconds: number
  /** Widget conversations per agent per UTC day and voice-chat minutes per agent per UTC day: the built-in
   *  defaults, replaced in place by the operator's stored overrides (admin/config.ts). */
  widgetConversationsPerDay: number
  voiceChatMinutesPerDay: number
  /** A voice chat's ceiling in seconds (VOICE_CHAT_MAX_SECONDS; SVC_VOICE_CHAT_MAX_SECONDS in tests only). */
  voiceChatMaxSeconds: number
  /** An instance silent this long is dead: its ringing and live calls are reconciled by the others. */
  callStaleSeconds: number
  /** Running campaigns one pass of the minute sweep serves, resuming after the last one served (test-only knob). */
  campaignSweepBatch: number
  /** The most items one contact list holds (200,000; SVC_CONTACT_LIST_MAX_ITEMS lowers it in tests). */
  contactListMaxItems: number
  /** Delays before webhook attempts 2, 3, …; one more attempt than delays, then `exhausted`. */
  webhookRetrySchedule: number[]
  /** A site crawl (knowledge base or build) ends with the pages so far after this many milliseconds. */
  crawlDeadlineMs: number
  /** Seconds between two sweeps for due knowledge syncs. */
  kbSyncSweepSeconds: number
  /** Per-minute overrides of the default rate-class limits (operators; tests raise them). */
  rateLimits: Record<string, number>
  /** Operator overrides of the default daily quotas (SVC_QUOTAS; per-user PATCH /users limits still win). */
  quotas: Record<string, number>
  /** SVC_WIDGET_DEMO=1: /widget-demo is served (never under SVC_ENV=production); else it is 404. */
  widgetDemo: boolean
  /** MP3 encoder threads for recordings (SVC_MP3_WORKERS; default max(1, cores − 1)). */
  mp3Workers: number
  /** Call audio (PCM bytes) waiting for the encoder threads past which a recording stops (SVC_MP3_BACKLOG_MB). */
  mp3BacklogBytes: number
  /** Test-only: each encoder thread throws after this many chunks (SVC_MP3_WORKER_CRASH_AFTER). */
  mp3WorkerCrashAfter: number | null
  /** Extra browser origins admitted on /mcp beside the service's own, loopback and https://claude.ai. */
  mcpAllowedOrigins: string[]
  /** OAuth access-token lifetime (1 hour) and the refresh-reuse grace window (30 s); tests shorten them. */
  oauthAccessTtlSeconds: number
  oauthRefreshGraceSeconds: number
  /** IPs and CIDRs of the proxies allowed to name the client (X-Forwarded-For) and scheme (X-Forwarded-Proto). */
  trustedProxies: string[]
  /** SIGTERM: live sessions and in-flight requests get this long each (SVC_SHUTDOWN_TIMEOUT_SECONDS, 20). */
  shutdownTimeoutSeconds: number
  /** SIGTERM: stay up this long answering health 503 before the port closes (SVC_SHUTDOWN_DELAY_SECONDS, 0). */
  shutdownDelaySeconds: number
}

/** Where a plain `node .output/server/index.mjs` listens unless NITRO_HOST or HOST says otherwise. */
export const DEFAULT_HOST = '127.0.0.1'

/** The address the node-server preset listens on: NITRO_HOST, else HOST, else loopback only (Nitro's own
 *  default, every interface, is never taken: decisions "Abuse and cost (issue 30)"). */
export const listenHost = (env: Record<string, string | undefined>) => env.NITRO_HOST || env.HOST || DEFAULT_HOST

// A generated dev secret lives in the data dir (mode 0600) so restarts keep cursors and keys valid.
function devSecret(dir: string, file: string, make: () => string): { value: string; path: string; created: boolean } {
  const path = resolve(dir, file)
  if (existsSync(path)) return { value: readFileSync(path, 'utf8').trim(), path, created: false }
  mkdirSync(dir, { recursive: true })
  const value = make()
  writeFileSync(path, value + '\n', { mode: 0o600 })
  return { value, path, created: true }
}

let cached: Config | undefined

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  if (cached) return cached
  const parsed = v.safeParse(Env, env)
  if (!parsed.success) {
    const issue = parsed.issues[0]
    throw new Error(`[config] ${v.getDotPath(issue) ?? 'env'}: ${issue.message}`)
  }
  const e = parsed.output
  const production = e.SVC_ENV === 'production'
  const dataDir = resolve(e.SVC_DATA_DIR)
  if (production && (!e.SVC_MASTER_KEY || !e.SVC_SECRET)) {
    throw new Error('[config] SVC_ENV=production requires SVC_MASTER_KEY and SVC_SECRET')
  }
  // Twilio signs the URL it calls and opens the media stream at the URL we give it: both need the real origin.
  if (e.SVC_TELEPHONY === 'twilio' && !e.SVC_PUBLIC_URL)
    throw new Error('[config] SVC_TELEPHONY=twilio requires SVC_PUBLIC_URL (the public https origin Twilio calls)')
  if (e.SVC_MAIL === 'smtp' && !e.SMTP_URL)
    throw new Error('[config] SVC_MAIL=smtp requires SMTP_URL (smtp://user:pass@host:port)')
  if (e.SVC_BLOB_DRIVER === 's3' && !e.SVC_BLOB_URL)
    throw new Error('[config] SVC_BLOB_DRIVER=s3 requires SVC_BLOB_URL (https://KEY_ID:SECRET@host/bucket?region=…)')
  let blobS3: S3Location | undefined
  try {
    blobS3 = e.SVC_BLOB_DRIVER === 's3' && e.SVC_BLOB_URL ? parseS3Url(e.SVC_BLOB_URL) : undefined
  } catch (err) {
    throw new Error(`[config] ${(err as Error).message}`)
  }
  let masterKey = e.SVC_MASTER_KEY
  let masterKeyFile: string | undefined
  if (!masterKey) {
    const k = devSecret(dataDir, 'master.key', () => 'svc_mk_live_' + randomBytes(36).toString('base64url'))
    masterKey = k.value
    masterKeyFile = k.path
  }
  const secret = e.SVC_SECRET ?? devSecret(dataDir, 'secret.key', () => randomBytes(32).toString('base64url')).value
  const port = Number(e.PORT)
  cached = {
    port,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir,
    blobDir: e.SVC_BLOB_DIR ? resolve(e.SVC_BLOB_DIR) : join(dataDir, 'blobs'),
    blobDriver: e.SVC_BLOB_DRIVER,
    blobS3,
    blobUrl: e.SVC_BLOB_URL || null,
    production,
    masterKey,
    masterKeyFile,
    metricsToken: e.SVC_METRICS_TOKEN,
    secret,
    redisUrl: e.REDIS_URL,
    tracing: e.OTEL_EXPORTER_OTLP_ENDPOINT ? { serviceName: e.OTEL_SERVICE_NAME } : null,
    pgPrepare: e.SVC_PG_PREPARE === 'true',
    publicUrl: (e.SVC_PUBLIC_URL ?? `http://${e.HOST}:${port}`).replace(/\/$/, ''),
    publicUrlExplicit: e.SVC_PUBLIC_URL !== undefined,
    allowPrivateHosts: e.SVC_ALLOW_PRIVATE_HOSTS.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    chatEngine: e.SVC_CHAT_ENGINE,
    telephony: e.SVC_TELEPHONY,
    speech: e.SVC_SPEECH,
    stt: e.SVC_STT || e.SVC_SPEECH,
    tts: e.SVC_TTS || e.SVC_SPEECH,
    mail: e.SVC_MAIL,
    plugins: e.SVC_PLUGINS.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    smtpUrl: e.SMTP_URL,
    smtpFrom: e.SMTP_FROM,
    jobPollSeconds: Number(e.SVC_JOB_POLL_SECONDS),
    queueSchema: e.SVC_QUEUE_SCHEMA,
    conversationIdleSeconds: Number(e.SVC_CONVERSATION_IDLE_SECONDS),
    widgetConversationsPerDay: WIDGET_CONVERSATIONS_PER_DAY.default,
    voiceChatMinutesPerDay: VOICE_CHAT_MINUTES_PER_DAY.default,
    voiceChatMaxSeconds: Math.max(1, Number(e.SVC_VOICE_CHAT_MAX_SECONDS)),
    callStaleSeconds: Math.max(2, Number(e.SVC_CALL_STALE_SECONDS)),
    campaignSweepBatch: Number(e.SVC_CAMPAIGN_SWEEP_BATCH),
    contactListMaxItems: Number(e.SVC_CONTACT_LIST_MAX_ITEMS),
    webhookRetrySchedule: e.SVC_WEBHOOK_RETRY_SCHEDULE.split(',').map((x) => Number(x.trim())),
    crawlDeadlineMs: Number(e.SVC_CRAWL_DEADLINE_SECONDS) * 1000,
    kbSyncSweepSeconds: Number(e.SVC_KB_SYNC_SWEEP_SECONDS),
    rateLimits: counts(e.SVC_RATE_LIMITS),
    quotas: counts(e.SVC_QUOTAS),
    widgetDemo: e.SVC_WIDGET_DEMO === '1' && !production,
    mp3Workers: e.SVC_MP3_WORKERS ? Number(e.SVC_MP3_WORKERS) : Math.max(1, availableParallelism() - 1),
    mp3BacklogBytes: Number(e.SVC_MP3_BACKLOG_MB) * 1024 * 1024,
    mp3WorkerCrashAfter: e.SVC_MP3_WORKER_CRASH_AFTER ? Number(e.SVC_MP3_WORKER_CRASH_AFTER) : null,
    mcpAllowedOrigins: e.SVC_MCP_ALLOWED_ORIGINS.split(',')
      .map((s) => s.trim().replace(/\/$/, ''))
      .filter(Boolean),
    oauthAccessTtlSeconds: Number(e.SVC_OAUTH_ACCESS_TTL_SECONDS),
    oauthRefreshGraceSeconds: Number(e.SVC_OAUTH_REFRESH_GRACE_SECONDS),
    trustedProxies: e.SVC_TRUSTED_PROXIES.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    shutdownTimeoutSeconds: Number(e.SVC_SHUTDOWN_TIMEOUT_SECONDS),
    shutdownDelaySeconds: Number(e.SVC_SHUTDOWN_DELAY_SECONDS),
  }
  return cached
}
