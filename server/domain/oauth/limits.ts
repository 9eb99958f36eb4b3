// Rate limits of the open OAuth endpoints, per minute on the shared limiter: registration per client IP;
// token and revocation per client and grant type, so a burst of failing refreshes never blocks the
// authorization_code exchange that would repair it. SVC_RATE_LIMITS may override register/token/revoke.
import type { Runtime } from '~/kit/runtime'
import { OAuthErrors } from './errors'

const DEFAULTS = { register: 20, token: 60, revoke: 60 } as const

export async function checkOAuthRate(runtime: Runtime, kind: keyof typeof DEFAULTS, key: string): Promise<void> {
  const limit = runtime.config.rateLimits[kind] ?? DEFAULTS[kind]
  const d = await runtime.rateLimiter.consume(`oauth-${kind}:${key}`, limit)
  if (!d.allowed) throw OAuthErrors.rateLimited(d.retryAfter)
}
