// OAuth endpoints answer RFC 6749 §5.2 error bodies ({error, error_description}), not the API envelope:
// OAuth client libraries parse exactly that shape (and the SDK re-registers on invalid_client).
export class OAuthError extends Error {
  constructor(
    public readonly status: number,
    public readonly error: string,
    description: string,
    public readonly headers: Record<string, string> = {},
  ) {
    super(description)
    this.name = 'OAuthError'
  }
}

export const OAuthErrors = {
  invalidRequest: (d: string) => new OAuthError(400, 'invalid_request', d),
  invalidClient: (d = 'Client authentication failed: unknown client or wrong secret.', basic = false) =>
    new OAuthError(401, 'invalid_client', d, basic ? { 'WWW-Authenticate': 'Basic realm="oauth"' } : {}),
  invalidGrant: (d: string) => new OAuthError(400, 'invalid_grant', d),
  unauthorizedClient: (d: string) => new OAuthError(400, 'unauthorized_client', d),
  unsupportedGrantType: (d: string) => new OAuthError(400, 'unsupported_grant_type', d),
  invalidScope: (d: string) => new OAuthError(400, 'invalid_scope', d),
  invalidTarget: (d = 'The resource is not served by this authorization server.') =>
    new OAuthError(400, 'invalid_target', d),
  invalidRedirectUri: (d: string) => new OAuthError(400, 'invalid_redirect_uri', d),
  invalidClientMetadata: (d: string) => new OAuthError(400, 'invalid_client_metadata', d),
  rateLimited: (retryAfter: number) =>
    new OAuthError(429, 'rate_limited', 'Too many requests; retry later.', {
      'Retry-After': String(Math.max(1, retryAfter)),
    }),
}

/** The RFC 6749 / 7591 codes our OAuth endpoints answer. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'rate_limited'
  | 'server_error'

/** Statuses of the codes that are not 400, for the OpenAPI document. */
export const OAUTH_ERROR_STATUS: Partial<Record<OAuthErrorCode, number>> = {
  invalid_client: 401,
  rate_limited: 429,
  server_error: 500,
}
