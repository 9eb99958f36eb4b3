// The booted process: one memoized `ready` promise (pitfall 2: Nitro does not await async plugins).
// Middleware 01 awaits it before any route runs; routes then read the runtime synchronously.
import type { Config } from '~/config'
import type { Database } from '~/db/client'
import type { RateLimiter } from './rate-limit'
import type { Registries } from './registries'
import type { AuditWriter } from './audit-writer'
import type { BlobStore } from './blob-store'
import type { Providers } from './providers'
import type { Queue } from './job'

/** Webhook dispatch and delivery in this process (implemented by domain/webhooks/pump.ts). */
export interface WebhookPump {
  /** Run a pass now (coalesced with one already running). */
  kick(): void
  state(): 'ok' | 'degraded'
  inFlight(): number
  stop(): Promise<void>
}

export interface Runtime {
  config: Config
  database: Database
  queue: Queue
  registries: Registries
  /** The configured chat engine, mailer and telephony provider, resolved at boot. */
  providers: Providers
  rateLimiter: RateLimiter
  /** Failed unauthenticated attempts, per client IP. */
  authFailureLimiter: RateLimiter
  /** Counts per hour, for what must stay rare whoever asks (password-reset mails per address and per IP). */
  hourlyLimiter: RateLimiter
  audit: AuditWriter
  /** Original uploads (unstorage; filesystem by default). */
  blobs: BlobStore
  /** Webhook dispatch and delivery in this process. */
  webhooks: WebhookPump
  startedAt: Date
}

/**
 * What a conversation turn and a voice session use of the process: a Runtime, or the same parts of a job's
 * context (an agent test run plays its calls from a job, with dry providers in place of the real ones).
 */
export type SessionRuntime = Pick<Runtime, 'config' | 'database' | 'providers' | 'registries' | 'blobs'> & {
  queue: Pick<Queue, 'send'>
}

let ready: Promise<Runtime> | undefined
let current: Runtime | undefined

export function setBoot(promise: Promise<Runtime>) {
  ready = promise.then((r) => (current = r))
}

export function whenReady(): Promise<Runtime> {
  if (!ready) throw new Error('boot has not started')
  return ready
}

export function useRuntime(): Runtime {
  if (!current) throw new Error('runtime used before boot completed')
  return current
}
