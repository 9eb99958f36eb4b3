// Rate limits of the open OAuth endpoints, per minute on the shared limiter: registration per client IP;
// token and revocation per client and grant type, so a burst of failing refreshes never blocks the
// authorization_code exchange that would repair it; Client ID Metadata Document fetches per client IP
// (cache hits are free). SVC_RATE_LIMITS and PATCH /admin/config may override each.
import { OAUTH_RATE_DEFAULTS as DEFAULTS } from '~/kit/rate-limit'
import type { Runtime } from '~/kit/runtime'
import { OAuthErrors } from './errors'

export async function checkOAuthRate(runtime: Runtime, kind: keyof typeof DEFAULTS, key: string): Promise<void> {
  const limit = runtime.config.rateLimits[kind] ?? DEFAULTS[kind]
  const d = await runtime.rateLimiter.consume(`oauth-${kind}:${key}`, limit)
  if (!d.allowed) throw OAuthErrors.rateLimited(d.retryAfter)
}
