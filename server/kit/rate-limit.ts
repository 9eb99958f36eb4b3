// Per-credential, per-class limits (per minute), in memory or in Redis when REDIS_URL is set so that
// every instance counts against the same budget (the API's classes, the failed-authentication limit, the
// widget and OAuth limiters all go through here). rate-limiter-flexible does the counting.
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'

export const RATE_CLASSES = ['read', 'metrics', 'audio', 'backfill', 'write', 'calls', 'build', 'chat'] as const
export type RateClass = (typeof RATE_CLASSES)[number]

/** The contract's sample-account figures, per minute. */
export const DEFAULT_RATE_LIMITS: Record<RateClass, number> = {
  read: 60,
  metrics: 20,
  audio: 30,
  backfill: 10,
  write: 60,
  calls: 20,
  build: 5,
  chat: 30,
}

/** Per minute: the public widget API's limiters, per client IP and per widget token (decisions "Widget"). */
export const WIDGET_RATE_DEFAULTS = { widget_ip: 60, widget_token: 600 } as const

/** Per minute: the open OAuth endpoints, registration per client IP, token and revocation per client;
 *  client_document: Client ID Metadata Document fetches (cache misses) per client IP. */
export const OAUTH_RATE_DEFAULTS = { register: 20, token: 60, revoke: 60, client_document: 30 } as const

/** Every limiter SVC_RATE_LIMITS and PATCH /admin/config set, with its built-in figure: the API classes
 *  (per credential), the widget's and the OAuth endpoints' (decisions "Abuse and cost (issue 30)"). */
export const RATE_LIMIT_DEFAULTS = { ...DEFAULT_RATE_LIMITS, ...WIDGET_RATE_DEFAULTS, ...OAUTH_RATE_DEFAULTS }
export type RateLimitName = keyof typeof RATE_LIMIT_DEFAULTS
export const RATE_LIMIT_NAMES = Object.keys(RATE_LIMIT_DEFAULTS) as RateLimitName[]

export interface RateDecision {
  limit: number
  remaining: number
  resetEpoch: number
  allowed: boolean
  retryAfter: number
}

export interface RateLimiter {
  consume(key: string, points: number): Promise<RateDecision>
  /** The decision without spending a point: lets a password check refuse before it runs. */
  peek(key: string, points: number): Promise<RateDecision>
}

export function createRateLimiter(opts: { redis?: unknown; prefix: string; duration?: number }): RateLimiter {
  const limiters = new Map<number, RateLimiterAbstract>()
  const duration = opts.duration ?? 60
  const limiterFor = (points: number) => {
    let l = limiters.get(points)
    if (!l) {
      const common = { points, duration, keyPrefix: `${opts.prefix}:${points}` }
      // With Redis down, the count falls back to this process's memory (a budget per instance) instead of
      // failing every request with a 500: Redis is a shared counter, not a dependency of the API.
      l = opts.redis
        ? new RateLimiterRedis({
            ...common,
            storeClient: opts.redis,
            useRedisPackage: false,
            insuranceLimiter: new RateLimiterMemory(common),
          })
        : new RateLimiterMemory(common)
      limiters.set(points, l)
    }
    return l
  }
  const toDecision = (points: number, r: RateLimiterRes, allowed: boolean): RateDecision => ({
    limit: points,
    remaining: Math.max(0, r.remainingPoints),
    resetEpoch: Math.ceil((Date.now() + r.msBeforeNext) / 1000),
    allowed,
    retryAfter: Math.ceil(r.msBeforeNext / 1000),
  })
  return {
    async consume(key, points) {
      try {
        return toDecision(points, await limiterFor(points).consume(key, 1), true)
      } catch (e) {
        if (e instanceof RateLimiterRes) return toDecision(points, e, false)
        throw e
      }
    },
    async peek(key, points) {
      const r = await limiterFor(points).get(key)
      if (!r)
        return {
          limit: points,
          remaining: points,
          resetEpoch: Math.ceil(Date.now() / 1000) + duration,
          allowed: true,
          retryAfter: 0,
        }
      return toDecision(points, r, r.consumedPoints < points)
    },
  }
}
