// Who may scrape GET /metrics (decisions "Prometheus metrics"): the master key, or the scrape-only
// SVC_METRICS_TOKEN. Compared as hashes in constant time, like the master key everywhere else.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { Config } from '~/config'
import { bearerToken } from '~/domain/credentials/authenticate'
import { Errors } from '~/lib/errors'

const digest = (s: string) => createHash('sha256').update(s).digest()

/** Throws 401 missing_credentials or invalid_credentials unless the bearer may read the metrics. */
export function assertMayScrape(authorization: string | undefined, config: Pick<Config, 'masterKey' | 'metricsToken'>) {
  const token = digest(bearerToken(authorization))
  const allowed = [config.masterKey, config.metricsToken].filter((x): x is string => !!x)
  // Every candidate is compared, so the time taken does not say which one came close.
  let ok = false
  for (const secret of allowed) ok = timingSafeEqual(token, digest(secret)) || ok
  if (!ok) throw Errors.invalidCredentials()
}
