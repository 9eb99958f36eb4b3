// Errors are values with a stable code; one handler (server/error.ts) renders them as the envelope.
export class ApiError extends Error {
  constructor(
    public readonly status: number,
    public readonly code: string,
    message: string,
    public readonly field: string | null = null,
    public readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

/** The catalogue of generic errors; domain areas add their own beside their code. */
export const Errors = {
  notFound: (what = 'Resource') => new ApiError(404, 'not_found', `${what} not found.`),
  methodNotAllowed: (allow: string[]) =>
    new ApiError(
      405,
      'method_not_allowed',
      'This method is not allowed on this path.',
      null,
      allow.length ? { Allow: allow.join(', ') } : {},
    ),
  invalidJson: () => new ApiError(400, 'invalid_json', 'The request body is not valid JSON.'),
  unsupportedMediaType: (expected: string) =>
    new ApiError(415, 'unsupported_media_type', `Send the body as ${expected}.`),
  payloadTooLarge: (limitBytes: number) =>
    new ApiError(413, 'payload_too_large', `The request body exceeds ${Math.round(limitBytes / 1024 / 1024)} MB.`),
  unsupportedField: (field: string) => new ApiError(400, 'unsupported_field', `Unknown field "${field}".`, field),
  unsupportedFilter: (field: string) =>
    new ApiError(400, 'unsupported_filter', `Unknown query parameter "${field}".`, field),
  emptyUpdate: () => new ApiError(400, 'empty_update', 'The update names no fields.'),
  validation: (field: string | null, message: string) => new ApiError(400, 'validation_error', message, field),
  invalidCursor: () =>
    new ApiError(400, 'invalid_cursor', 'The cursor is malformed or was issued for another query.', 'cursor'),
  missingCredentials: () => new ApiError(401, 'missing_credentials', 'Send Authorization: Bearer <API key>.'),
  invalidCredentials: () =>
    new ApiError(401, 'invalid_credentials', 'The credential is unknown, malformed or revoked.'),
  expiredToken: () => new ApiError(401, 'expired_token', 'The credential has expired.'),
  insufficientScope: (scope: string) => new ApiError(403, 'insufficient_scope', `This route needs the scope ${scope}.`),
  accountSuspended: () =>
    new ApiError(
      403,
      'account_suspended',
      'This user or account is suspended; every credential of it is refused until it is resumed.',
    ),
  forbiddenAccount: (message = 'The credential does not cover this account.') =>
    new ApiError(403, 'forbidden_account', message, 'account_id'),
  rateLimited: (retryAfterSeconds: number) =>
    new ApiError(429, 'rate_limited', 'Too many requests; retry later.', null, {
      'Retry-After': String(Math.max(1, retryAfterSeconds)),
    }),
  internal: () =>
    new ApiError(500, 'internal_error', 'An unexpected error occurred. Quote the request id when you report it.'),
} as const

/**
 * Schema messages may carry a catalogue code as `code|human message`, so a valibot check can answer
 * `invalid_date` or `invalid_email` instead of the generic `validation_error`.
 */
export const coded = (code: string, message: string) => `${code}|${message}`

export function splitCoded(message: string): { code: string; message: string } {
  const m = /^([a-z_]+)\|(.*)$/s.exec(message)
  return m ? { code: m[1], message: m[2] } : { code: 'validation_error', message }
}

const GENERIC: Record<number, string> = {
  400: 'validation_error',
  401: 'invalid_credentials',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
}

/**
 * Maps anything thrown to the contract error: ApiError as is (also when h3 wrapped it), the router's
 * own 404/405 to not_found/method_not_allowed, other 4xx H3Errors to their generic code, and everything
 * else to 500 internal_error, whose message never carries the original error.
 */
export function toApiError(error: unknown, allow: () => string[] = () => []): ApiError {
  if (error instanceof ApiError) return error
  const e = error as { cause?: unknown; statusCode?: number; statusMessage?: string } | null
  if (e?.cause instanceof ApiError) return e.cause
  const status = e?.statusCode
  if (status === 404) return Errors.notFound('Route')
  if (status === 405) return Errors.methodNotAllowed(allow())
  if (status === 413) return Errors.payloadTooLarge(2 * 1024 * 1024)
  if (status && status >= 400 && status < 500)
    return new ApiError(status, GENERIC[status] ?? 'bad_request', 'The request was not understood.')
  return Errors.internal()
}
