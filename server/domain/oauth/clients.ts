// Dynamic client registration (RFC 7591) and client authentication at the token and revocation
// endpoints. A secret is issued only for client_secret_post / client_secret_basic, stored as SHA-256.
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { eq } from 'drizzle-orm'
import type * as v from 'valibot'
import type { Database } from '~/db/client'
import { oauthClients } from '~/db/schema'
import { OAuthErrors } from './errors'
import type { RegisterBody } from './schemas'
import { mintToken, sha256Hex } from '~/lib/opaque-token'

export type ClientRow = typeof oauthClients.$inferSelect

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

export function isLoopback(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)
}

/** https anywhere, http only on loopback; never a fragment (OAuth 2.1 §2.3.1, MCP Communication Security). */
export function checkRedirectUri(value: string): void {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw OAuthErrors.invalidRedirectUri(`"${value.slice(0, 200)}" is not an absolute URI.`)
  }
  if (value.includes('#')) throw OAuthErrors.invalidRedirectUri('A redirect URI must not carry a fragment.')
  if (url.protocol !== 'https:' && !isLoopback(url))
    throw OAuthErrors.invalidRedirectUri('Redirect URIs must use https, or http on localhost, 127.0.0.1 or [::1].')
}

function optionalUrl(name: string, value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined
  try {
    const url = new URL(value)
    if (url.protocol === 'https:' || url.protocol === 'http:') return value
  } catch {}
  throw OAuthErrors.invalidClientMetadata(`${name} must be an http(s) URL.`)
}

export async function registerClient(database: Database, body: v.InferOutput<typeof RegisterBody>, now = new Date()) {
  const uris = body.redirect_uris
  if (!uris.length) throw OAuthErrors.invalidRedirectUri('Register at least one redirect URI.')
  if (uris.length > 10) throw OAuthErrors.invalidRedirectUri('Register at most 10 redirect URIs.')
  for (const u of uris) {
    if (u.length > 2000) throw OAuthErrors.invalidRedirectUri('A redirect URI is longer than 2000 characters.')
    checkRedirectUri(u)
  }
  // Unsupported grant types (client_credentials, implicit…) are dropped, as RFC 7591 §3.2.1 lets the
  // server replace values; the answer shows what was registered.
  const grantTypes = (body.grant_types ?? ['authorization_code', 'refresh_token']).filter(
    (g) => g === 'authorization_code' || g === 'refresh_token',
  )
  if (!grantTypes.includes('authorization_code'))
    throw OAuthErrors.invalidClientMetadata('grant_types must include authorization_code.')
  const responseTypes = body.response_types ?? ['code']
  if (responseTypes.length !== 1 || responseTypes[0] !== 'code')
    throw OAuthErrors.invalidClientMetadata('response_types must be ["code"].')
  if (body.client_name !== undefined && body.client_name.length > 200)
    throw OAuthErrors.invalidClientMetadata('client_name is longer than 200 characters.')
  const method = body.token_endpoint_auth_method
  const metadata: Record<string, unknown> = {
    redirect_uris: [...new Set(uris)],
    token_endpoint_auth_method: method,
    grant_types: [...new Set(grantTypes)],
    response_types: ['code'],
  }
  if (body.client_name) metadata.client_name = body.client_name
  const clientUri = optionalUrl('client_uri', body.client_uri)
  if (clientUri) metadata.client_uri = clientUri
  const logoUri = optionalUrl('logo_uri', body.logo_uri)
  if (logoUri) metadata.logo_uri = logoUri
  if (typeof body.scope === 'string') metadata.scope = body.scope.slice(0, 1000)
  for (const k of ['software_id', 'software_version'] as const)
    if (typeof body[k] === 'string') metadata[k] = body[k]!.slice(0, 200)
  if (body.application_type === 'web' || body.application_type === 'native')
    metadata.application_type = body.application_type

  const clientId = 'svc_oc_' + randomBytes(16).toString('base64url')
  const secret = method === 'none' ? undefined : mintToken('svc_cs_')
  await database.db.insert(oauthClients).values({
    id: clientId,
    secretHash: secret ? sha256Hex(secret) : null,
    tokenEndpointAuthMethod: method,
    redirectUris: metadata.redirect_uris as string[],
    metadata,
    clientName: body.client_name ?? null,
    createdAt: now,
  })
  return {
    client_id: clientId,
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    ...(secret ? { client_secret: secret, client_secret_expires_at: 0 as const } : {}),
    ...metadata,
  }
}

/** A stored client: registered, or a URL client (Client ID Metadata Document) a user once approved. */
export async function findClient(database: Database, clientId: string): Promise<ClientRow | null> {
  if (!clientId || clientId.length > 2000) return null
  const [row] = await database.db.select().from(oauthClients).where(eq(oauthClients.id, clientId))
  return row && !row.deletedAt ? row : null
}

function basicCredentials(header: string | undefined): { id: string; secret: string } | null {
  if (!header) return null
  const m = /^Basic[ ]+([A-Za-z0-9+/=]+)\s*$/i.exec(header)
  if (!m) throw OAuthErrors.invalidClient('Use HTTP Basic client authentication or client_id in the body.', true)
  const decoded = Buffer.from(m[1], 'base64').toString('utf8')
  const i = decoded.indexOf(':')
  if (i < 0) throw OAuthErrors.invalidClient('Malformed HTTP Basic credentials.', true)
  // RFC 6749 §2.3.1: both halves are form-urlencoded before base64.
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, i).replace(/\+/g, ' ')),
      secret: decodeURIComponent(decoded.slice(i + 1).replace(/\+/g, ' ')),
    }
  } catch {
    throw OAuthErrors.invalidClient('Malformed HTTP Basic credentials.', true)
  }
}

/**
 * The calling client at the token and revocation endpoints. A confidential client may send its secret
 * by Basic or in the body (either is accepted, whichever it registered); a public client sends only
 * client_id and must not present a secret. Unknown client or wrong secret → 401 invalid_client.
 */
export async function authenticateClient(
  database: Database,
  /** The request's Authorization header (HTTP Basic), if any. */
  authorization: string | undefined,
  form: Record<string, string>,
): Promise<ClientRow> {
  const basic = basicCredentials(authorization)
  if (basic && form.client_secret !== undefined)
    throw OAuthErrors.invalidRequest('Use one client authentication method, not two.')
  if (basic && form.client_id !== undefined && form.client_id !== basic.id)
    throw OAuthErrors.invalidClient('client_id does not match the Basic credentials.', true)
  const id = basic?.id ?? form.client_id
  if (!id) throw OAuthErrors.invalidClient('Identify the client: client_id in the body or HTTP Basic.')
  const secret = basic?.secret ?? form.client_secret
  const client = await findClient(database, id)
  if (!client) throw OAuthErrors.invalidClient(undefined, !!basic)
  if (client.secretHash) {
    if (secret === undefined)
      throw OAuthErrors.invalidClient('This client must authenticate with its client_secret.', !!basic)
    const a = Buffer.from(client.secretHash, 'hex')
    const b = Buffer.from(sha256Hex(secret), 'hex')
    if (!timingSafeEqual(a, b)) throw OAuthErrors.invalidClient(undefined, !!basic)
  } else if (secret !== undefined && secret !== '') {
    throw OAuthErrors.invalidClient(
      'This client was registered without a secret (token_endpoint_auth_method none).',
      !!basic,
    )
  }
  return client
}
