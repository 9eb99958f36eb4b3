// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; MCP 2025-11-25
// "Client Registration Approaches"): a client_id that is an https URL names a JSON document describing
// the client, which the authorization server fetches instead of a registration. The fetch goes through
// the crawler's SSRF guard with tight bounds, the answer is cached per process by its Cache-Control, and
// every failure is invalid_client. A URL client gets an oauth_clients row (id = the URL) only when a
// user approves it, because grants reference their client; until then nothing is written.
import { ApiError } from '~/lib/errors'
import type { Executor } from '~/db/client'
import { oauthClients } from '~/db/schema'
import type { Runtime } from '~/kit/runtime'
import { FetchError, safeFetch } from '~/domain/kb/safe-fetch'
import { normalizeHost } from '~/domain/kb/url-guard'
import { checkRedirectUri, findClient, type ClientRow } from './clients'
import { OAuthError } from './errors'
import { checkOAuthRate } from './limits'

/** The spec row's bounds: 5 s for the whole fetch (redirects included), 5 KB of decoded body. */
export const DOCUMENT_TIMEOUT_MS = 5_000
export const DOCUMENT_MAX_BYTES = 5 * 1024
/** A client_id URL longer than this is refused before any fetch. */
export const MAX_CLIENT_ID_URL = 2_000
/** Cache lifetimes: Cache-Control max-age within [MIN, MAX]; no header → DEFAULT; a failure → FAILURE. */
export const CACHE_MIN_MS = 5_000
export const CACHE_MAX_MS = 24 * 3_600_000
export const CACHE_DEFAULT_MS = 5 * 60_000
export const CACHE_FAILURE_MS = 10_000
/** Documents (and failures) kept per process; the oldest-used goes first. */
export const CACHE_ENTRIES = 500
const MAX_REDIRECTS = 3
const MAX_REDIRECT_URIS = 20
const MAX_NAME = 200

/** What the service keeps of a valid document. */
export interface ClientDocument {
  clientId: string
  clientName: string | null
  redirectUris: string[]
  metadata: Record<string, unknown>
}

/** A client_id that is meant as a document URL (anything else is a registered client's id). */
export const isUrlClientId = (clientId: string) => /^https?:\/\//i.test(clientId)

const invalidClient = (why: string) => new OAuthError(401, 'invalid_client', `Client ID Metadata Document: ${why}`)

/**
 * The client_id URL rules of the draft (§3): https (http only on a host SVC_ALLOW_PRIVATE_HOSTS lists,
 * for development and tests), a path beyond "/", no "." or ".." segments, no fragment, no credentials.
 * A query is allowed (the draft discourages but permits it).
 */
export function checkClientIdUrl(raw: string, allowPrivateHosts: readonly string[]): URL {
  if (raw.length > MAX_CLIENT_ID_URL) throw invalidClient(`the client_id URL is longer than ${MAX_CLIENT_ID_URL}.`)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw invalidClient('the client_id is not a valid URL.')
  }
  const allowedHttp =
    url.protocol === 'http:' && allowPrivateHosts.some((h) => normalizeHost(h) === normalizeHost(url.hostname))
  if (url.protocol !== 'https:' && !allowedHttp) throw invalidClient('the client_id URL must use https.')
  if (raw.includes('#')) throw invalidClient('the client_id URL must not have a fragment.')
  if (url.username || url.password) throw invalidClient('the client_id URL must not carry credentials.')
  const path = raw.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '').split('?')[0]
  if (!path || path === '/') throw invalidClient('the client_id URL must have a path (e.g. /client.json).')
  if (path.split('/').some((s) => s === '.' || s === '..' || /^%2e(%2e)?$/i.test(s) || /^\.%2e$|^%2e\.$/i.test(s)))
    throw invalidClient('the client_id URL must not contain "." or ".." path segments.')
  return url
}

const str = (value: unknown, field: string): string | undefined => {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw invalidClient(`${field} must be a string.`)
  return value
}

const optionalHttpUrl = (value: unknown, field: string): string | undefined => {
  const s = str(value, field)
  if (s === undefined || s === '') return undefined
  try {
    const u = new URL(s)
    if ((u.protocol === 'https:' || u.protocol === 'http:') && s.length <= 2000) return s
  } catch {}
  throw invalidClient(`${field} must be an http(s) URL.`)
}

/**
 * The document's rules (draft §4; MCP "For Authorization Servers"): a JSON object whose client_id is
 * the URL byte for byte, with redirect_uris, a public client (token_endpoint_auth_method none or absent:
 * there is no shared secret with a document, and we do not support private_key_jwt), no client_secret.
 * Redirect URIs this server would refuse at registration (custom schemes, http off loopback) are
 * dropped, so a native app's extra entries do not lock out its usable ones; none left is invalid.
 */
export function validateDocument(clientId: string, body: Buffer): ClientDocument {
  let doc: unknown
  try {
    doc = JSON.parse(body.toString('utf8'))
  } catch {
    throw invalidClient('the document is not valid JSON.')
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw invalidClient('the document is not a JSON object.')
  const d = doc as Record<string, unknown>
  if (d.client_id !== clientId) throw invalidClient('its client_id is not exactly the URL it was fetched from.')
  if ('client_secret' in d || 'client_secret_expires_at' in d)
    throw invalidClient('a document must not carry a client_secret.')
  const method = str(d.token_endpoint_auth_method, 'token_endpoint_auth_method') ?? 'none'
  if (method !== 'none')
    throw invalidClient(`token_endpoint_auth_method ${method.slice(0, 40)} is not supported; use none (PKCE).`)
  if (
    !Array.isArray(d.redirect_uris) ||
    !d.redirect_uris.length ||
    !d.redirect_uris.every((u) => typeof u === 'string')
  )
    throw invalidClient('redirect_uris must be a non-empty array of strings.')
  if (d.redirect_uris.length > MAX_REDIRECT_URIS) throw invalidClient(`more than ${MAX_REDIRECT_URIS} redirect_uris.`)
  const redirectUris = [
    ...new Set(
      (d.redirect_uris as string[]).filter((u) => {
        if (u.length > 2000) return false
        try {
          checkRedirectUri(u)
          return true
        } catch {
          return false
        }
      }),
    ),
  ]
  if (!redirectUris.length) throw invalidClient('none of its redirect_uris is https or loopback http.')
  const grantTypes = d.grant_types
  if (grantTypes !== undefined && (!Array.isArray(grantTypes) || !grantTypes.includes('authorization_code')))
    throw invalidClient('grant_types must include authorization_code.')
  const responseTypes = d.response_types
  if (responseTypes !== undefined && (!Array.isArray(responseTypes) || !responseTypes.includes('code')))
    throw invalidClient('response_types must include code.')
  const clientName = str(d.client_name, 'client_name')
  if (clientName !== undefined && clientName.length > MAX_NAME)
    throw invalidClient(`client_name is longer than ${MAX_NAME} characters.`)
  const metadata: Record<string, unknown> = {
    client_id: clientId,
    redirect_uris: redirectUris,
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  }
  if (clientName) metadata.client_name = clientName
  // Kept for the record, never fetched (a logo fetch would be a second SSRF surface for no gain).
  const clientUri = optionalHttpUrl(d.client_uri, 'client_uri')
  if (clientUri) metadata.client_uri = clientUri
  const logoUri = optionalHttpUrl(d.logo_uri, 'logo_uri')
  if (logoUri) metadata.logo_uri = logoUri
  return { clientId, clientName: clientName || null, redirectUris, metadata }
}

/** How long a fetched document may be reused: its max-age within [CACHE_MIN_MS, CACHE_MAX_MS]. */
export function cacheLifetimeMs(cacheControl: string | null): number {
  if (!cacheControl) return CACHE_DEFAULT_MS
  const directives = cacheControl
    .toLowerCase()
    .split(',')
    .map((s) => s.trim())
  // no-store / no-cache still get the minimum: one authorization (page, then consent) must not fetch
  // twice within seconds, and the floor bounds what a hostile document can make us fetch.
  if (directives.some((x) => x === 'no-store' || x === 'no-cache')) return CACHE_MIN_MS
  const maxAge = directives.map((x) => /^max-age\s*=\s*"?(\d+)"?$/.exec(x)).find(Boolean)
  if (!maxAge) return CACHE_DEFAULT_MS
  return Math.min(CACHE_MAX_MS, Math.max(CACHE_MIN_MS, Number(maxAge[1]) * 1000))
}

type Entry = { until: number; doc?: ClientDocument; error?: OAuthError }
const cache = new Map<string, Entry>()
const inflight = new Map<string, Promise<ClientDocument>>()

function remember(clientId: string, entry: Entry) {
  cache.delete(clientId)
  cache.set(clientId, entry)
  while (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!)
}

export interface FetchContext {
  allowPrivateHosts: readonly string[]
  /** Called before each real fetch (not for cache hits): the rate limit of the caller. */
  beforeFetch?: () => Promise<void>
  now?: () => number
}

async function fetchDocument(clientId: string, ctx: FetchContext): Promise<{ doc: ClientDocument; ttl: number }> {
  const url = checkClientIdUrl(clientId, ctx.allowPrivateHosts)
  await ctx.beforeFetch?.()
  try {
    const res = await safeFetch(url.href, {
      allowPrivateHosts: ctx.allowPrivateHosts,
      timeoutMs: DOCUMENT_TIMEOUT_MS,
      maxBytes: DOCUMENT_MAX_BYTES,
      maxRedirects: MAX_REDIRECTS,
      accept: 'application/json',
      userAgent: 'SvcOAuth/1.0 (client-id-metadata-document)',
      field: 'client_id',
    })
    return { doc: validateDocument(clientId, res.body), ttl: cacheLifetimeMs(res.headers.get('cache-control')) }
  } catch (e) {
    if (e instanceof OAuthError) throw e
    if (e instanceof ApiError) throw invalidClient(`the URL is refused: ${e.message}`)
    if (e instanceof FetchError) throw invalidClient(`fetching it failed: ${e.message}`)
    throw e
  }
}

/**
 * The document of a URL client_id: from the cache while fresh, else fetched (one fetch per URL at a
 * time, however many requests wait for it). Throws OAuthError invalid_client (or rate_limited from
 * beforeFetch, which is not cached).
 */
export async function resolveDocument(clientId: string, ctx: FetchContext): Promise<ClientDocument> {
  const now = ctx.now ?? Date.now
  const hit = cache.get(clientId)
  if (hit && hit.until > now()) {
    remember(clientId, hit)
    if (hit.error) throw hit.error
    return hit.doc!
  }
  let pending = inflight.get(clientId)
  if (!pending) {
    pending = fetchDocument(clientId, ctx)
      .then(({ doc, ttl }) => {
        remember(clientId, { until: now() + ttl, doc })
        return doc
      })
      .catch((e) => {
        if (e instanceof OAuthError && e.error === 'invalid_client')
          remember(clientId, { until: now() + CACHE_FAILURE_MS, error: e })
        throw e
      })
      .finally(() => inflight.delete(clientId))
    inflight.set(clientId, pending)
  }
  return pending
}

/** The client row a document stands for (not stored until approval, see upsertDocumentClient). */
export const documentClient = (doc: ClientDocument): ClientRow => ({
  id: doc.clientId,
  secretHash: null,
  tokenEndpointAuthMethod: 'none',
  redirectUris: doc.redirectUris,
  metadata: doc.metadata,
  clientName: doc.clientName,
  createdAt: new Date(),
  lastUsedAt: null,
  deletedAt: null,
})

/** Writes (or refreshes) a URL client's row, in the approval's transaction: grants reference it. */
export async function upsertDocumentClient(ex: Executor, client: ClientRow): Promise<void> {
  await ex
    .insert(oauthClients)
    .values({
      id: client.id,
      secretHash: null,
      tokenEndpointAuthMethod: 'none',
      redirectUris: client.redirectUris,
      metadata: client.metadata,
      clientName: client.clientName,
    })
    .onConflictDoUpdate({
      target: oauthClients.id,
      set: { redirectUris: client.redirectUris, metadata: client.metadata, clientName: client.clientName },
    })
}

/** Looks a client up by id for the authorization endpoint: a URL through its document, else a registration. */
export type ClientLookup = (clientId: string) => Promise<ClientRow | null>

/**
 * The authorization endpoint's lookup: document fetches count against the caller's IP (client_document
 * limiter, per minute), cache hits do not.
 */
export function clientLookup(runtime: Runtime, ipKey: string): ClientLookup {
  return async (clientId) => {
    if (!isUrlClientId(clientId)) return findClient(runtime.database, clientId)
    const doc = await resolveDocument(clientId, {
      allowPrivateHosts: runtime.config.allowPrivateHosts,
      beforeFetch: () => checkOAuthRate(runtime, 'client_document', `ip:${ipKey}`),
    })
    return documentClient(doc)
  }
}

/** The host a URL client is published on, shown on consent (null for a registered client). */
export function documentHost(clientId: string): string | null {
  if (!isUrlClientId(clientId)) return null
  try {
    return new URL(clientId).host
  } catch {
    return null
  }
}
