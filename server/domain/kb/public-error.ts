// What a build step, a crawl, a knowledge document or a reindex may tell the tenant about its own
// failure. Status texts are read by tenants, so an internal message (a gateway URL, SQL, an address that
// refused a connection, a stack) must never reach them: only errors written for users pass, the rest
// become one of a few fixed sentences, and the caller logs the detail server-side (`internalDetail`).
import { ApiError } from '~/lib/errors'
import { CrawlRefused } from './crawler'
import { FetchError } from './safe-fetch'

/** An error whose message is written for the tenant (throw it where a plain Error would say something useful). */
export class PublicError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PublicError'
  }
}

export const PUBLIC_MESSAGES = {
  unreachable: 'The site could not be reached.',
  timeout: 'The site did not answer in time.',
  tooLarge: 'The page is too large.',
  redirects: 'The site redirected too many times.',
  crawl: 'The site could not be crawled; try again.',
  engine: 'The engine failed; try again.',
  internal: 'An internal error stopped the work; try again.',
} as const

const MAX_PUBLIC = 300

/**
 * The tenant-facing text for `err`: fetch failures by kind (never the network error's own words), the
 * messages of ApiError, CrawlRefused and PublicError, and a plain Error's message only when it is short
 * and names no address, URL, error code, bracketed tag or line break (our own sentences such as "No
 * indexed documents to summarise."). Everything else, library and driver errors above all, is `fallback`.
 */
export function publicMessage(err: unknown, fallback: string = PUBLIC_MESSAGES.internal): string {
  if (err instanceof FetchError) {
    switch (err.reason) {
      case 'http_status':
        return `The site answered HTTP ${err.status}.`
      case 'timeout':
        return PUBLIC_MESSAGES.timeout
      case 'too_large':
        return PUBLIC_MESSAGES.tooLarge
      case 'too_many_redirects':
        return PUBLIC_MESSAGES.redirects
      default:
        return PUBLIC_MESSAGES.unreachable
    }
  }
  if (err instanceof ApiError || err instanceof CrawlRefused || err instanceof PublicError)
    return err.message.slice(0, MAX_PUBLIC)
  if (err instanceof Error && Object.getPrototypeOf(err) === Error.prototype && isPlainSentence(err)) return err.message
  return fallback
}

/** The detail for the server log: the message and, for errors that carry one, the code; then what it wraps
 *  (Drizzle's "Failed query" hides the driver's own error, "deadlock detected", in `cause`). */
export function internalDetail(err: unknown, depth = 0): string {
  if (!(err instanceof Error)) return String(err)
  const code = (err as { code?: unknown }).code
  const own = `${err.name}: ${err.message}${code !== undefined ? ` (code ${String(code)})` : ''}`
  return err.cause !== undefined && depth < 3 ? `${own}; caused by ${internalDetail(err.cause, depth + 1)}` : own
}

// Length first, so the patterns below only ever see MAX_PUBLIC characters; none has nested quantifiers.
const INTERNAL_MARKS = [
  /:\/\//, // any URL: a gateway, a database, an internal service
  /\b\d{1,3}(?:\.\d{1,3}){3}\b/, // an IPv4 address
  /[0-9a-f]{0,4}::?[0-9a-f]{1,4}:/i, // an IPv6 address
  /\bE[A-Z]{3,}\b/, // a system error code (ECONNREFUSED, ENOTFOUND, EACCES…)
  /[[\]{}<>`$\\]/, // tags, JSON, templates, paths
  /\b(?:select|insert|update|delete)\b[^.]*\b(?:from|into|set|where)\b/i, // SQL
  /\b(?:relation|column|constraint|syntax error|stack|at [\w.]+ \()/i,
]

function isPlainSentence(err: Error): boolean {
  const e = err as Error & { code?: unknown; errno?: unknown; syscall?: unknown }
  if (e.code !== undefined || e.errno !== undefined || e.syscall !== undefined || e.cause !== undefined) return false
  const m = e.message
  if (!m || m.length > MAX_PUBLIC || /[\r\n]/.test(m)) return false
  return !INTERNAL_MARKS.some((re) => re.test(m))
}
