// Errors are values with a stable code; one handler (server/error.ts) renders them as the envelope.

/**
 * Every code the API answers, with its HTTP status and a one-line summary: the one source of truth for
 * the status of a code (ApiError checks it), the OpenAPI responses and the docs. A new code goes here
 * first; routes name theirs in `errors: ErrorCode[]`.
 */
export const ERROR_CODES = {
  // Requests and validation
  validation_error: [400, 'A value failed validation; error.field names it'],
  unsupported_field: [400, 'Unknown body key; error.field names it'],
  unsupported_filter: [400, 'Unknown query parameter, enum value, include or sort'],
  invalid_json: [400, 'Malformed JSON body'],
  empty_update: [400, 'Patch with no fields'],
  missing_param: [400, 'A required query parameter is missing'],
  invalid_id: [400, 'A malformed id'],
  invalid_date: [400, 'Not an ISO-8601 UTC timestamp'],
  invalid_date_range: [400, 'from is not before to, or the window is too long'],
  invalid_limit: [400, 'limit outside 1..100'],
  invalid_cursor: [400, 'A malformed cursor, or one issued for another query'],
  invalid_email: [400, 'Not an e-mail address'],
  invalid_phone: [400, 'Not an E.164 phone number'],
  number_not_owned: [400, 'The telephony provider account does not own the phone number'],
  invalid_type: [400, 'A value of the wrong type'],
  invalid_url: [400, 'Not a public http(s) URL'],
  invalid_scope: [400, 'An unknown, master-only or not-held scope'],
  missing_variable: [400, 'A {{variable}} of the profile has no value; error.field names it'],
  unsupported_policy: [400, 'A voicemail policy other than hang_up'],
  bad_request: [400, 'The request was not understood'],
  unsupported_media_type: [415, 'Body is not application/json'],
  payload_too_large: [413, 'JSON body above 2 MB or upload above 10 MB'],
  method_not_allowed: [405, 'The method is not allowed on this path; see Allow'],
  request_timeout: [408, 'The request took too long to arrive'],
  // Credentials and access
  missing_credentials: [401, 'No bearer credential'],
  invalid_credentials: [401, 'Unknown, malformed or revoked credential'],
  expired_token: [401, 'Credential past expiry'],
  insufficient_scope: [403, 'The credential lacks the route scope'],
  forbidden_account: [403, 'The account is not on the credential'],
  ip_not_allowed: [403, 'Source IP outside the key ip_allowlist'],
  account_suspended: [403, 'The credential belongs to a suspended user or account'],
  forbidden: [403, 'The request may not be made from here'],
  forbidden_origin: [403, 'This Origin may not call the endpoint'],
  invalid_token: [400, 'A one-time or signed token (password reset, recording URL) that is invalid, used or expired'],
  invalid_widget_token: [401, 'Widget routes: no, unknown or replaced X-Svc-Widget-Token (API keys are not accepted)'],
  origin_not_allowed: [403, "Widget routes: the Origin is not in the agent's allowed_domains"],
  invalid_visitor_token: [403, "Widget routes: X-Svc-Visitor-Token is missing or not the conversation's"],
  dnc_listed: [403, 'The number is on the do-not-call list'],
  // Limits and billing
  rate_limited: [429, 'Rate class or per-IP limit reached; see Retry-After'],
  quota_exceeded: [429, 'A daily quota is used up; see Retry-After'],
  payment_required: [402, 'The balance does not cover the request'],
  plan_limit_reached: [403, "The plan's cap is reached"],
  // State
  not_found: [404, 'No such resource in your accounts'],
  agent_not_found: [404, 'No such agent in your accounts'],
  email_exists: [409, 'The e-mail is taken'],
  number_taken: [409, 'The phone number is already held by an account'],
  version_label_exists: [409, 'The version label is taken'],
  build_in_progress: [409, 'A build of this agent is running'],
  sync_in_progress: [409, 'A knowledge sync of this agent is running; its id is in the message'],
  tests_failed: [
    409,
    "The agent's tests did not reach its test_gate on the new prompt version: it is listed but not active; the message names the run",
  ],
  agent_paused: [409, 'The agent is paused by the operator'],
  turn_in_progress: [409, 'Another message of this conversation is being answered'],
  conversation_ended: [409, 'The conversation has ended'],
  call_not_cancelable: [409, 'Only a queued or ringing call can be canceled'],
  invalid_state: [409, 'The resource is not in a status that allows this action'],
  conversation_deleted: [410, 'The conversation was deleted'],
  idempotency_key_reused: [409, 'The Idempotency-Key was used with another body'],
  idempotency_key_in_use: [409, 'A request with this Idempotency-Key is still running'],
  idempotency_answer_lost: [
    409,
    'The request with this Idempotency-Key was carried out but its answer was lost; it is not run again',
  ],
  internal_error: [500, 'Unexpected failure; quote the request id'],
  provider_unavailable: [
    502,
    'An outside provider the request depends on (the telephony provider) failed or could not be reached; nothing was changed, retry',
  ],
  service_unavailable: [503, 'This instance is shutting down; retry (through the balancer another one answers)'],
} as const satisfies Record<string, readonly [number, string]>

export type ErrorCode = keyof typeof ERROR_CODES

export const statusOf = (code: ErrorCode): number => ERROR_CODES[code][0]
export const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(ERROR_CODES, code)

export class ApiError extends Error {
  constructor(
    public readonly status: number,
    public readonly code: ErrorCode,
    message: string,
    public readonly field: string | null = null,
    public readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

/** An error of the catalogue: its status comes from ERROR_CODES. */
export const apiError = (
  code: ErrorCode,
  message: string,
  field: string | null = null,
  headers?: Record<string, string>,
) => new ApiError(statusOf(code), code, message, field, headers)

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
  invalidJson: (message = 'The request body is not valid JSON.') => new ApiError(400, 'invalid_json', message),
  unsupportedMediaType: (expected: string) =>
    new ApiError(415, 'unsupported_media_type', `Send the body as ${expected}.`),
  payloadTooLarge: (limitBytes: number) =>
    new ApiError(413, 'payload_too_large', `The request body exceeds ${Math.round(limitBytes / 1024 / 1024)} MB.`),
  unsupportedField: (field: string) => new ApiError(400, 'unsupported_field', `Unknown field "${field}".`, field),
  unsupportedFilter: (field: string) =>
    new ApiError(400, 'unsupported_filter', `Unknown query parameter "${field}".`, field),
  emptyUpdate: () => new ApiError(400, 'empty_update', 'The update names no fields.'),
  validation: (field: string | null, message: string) => new ApiError(400, 'validation_error', message, field),
  invalidDateRange: (message = 'from must be earlier than to.', field = 'from') =>
    new ApiError(400, 'invalid_date_range', message, field),
  invalidCursor: () =>
    new ApiError(400, 'invalid_cursor', 'The cursor is malformed or was issued for another query.', 'cursor'),
  missingCredentials: () => new ApiError(401, 'missing_credentials', 'Send Authorization: Bearer <API key>.'),
  invalidCredentials: () =>
    new ApiError(401, 'invalid_credentials', 'The credential is unknown, malformed or revoked.'),
  expiredToken: () => new ApiError(401, 'expired_token', 'The credential has expired.'),
  insufficientScope: (scope: string) => new ApiError(403, 'insufficient_scope', `This route needs the scope ${scope}.`),
  accountSuspended: (
    message = 'This user or account is suspended; every credential of it is refused until it is resumed.',
  ) => new ApiError(403, 'account_suspended', message),
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
export const coded = (code: ErrorCode, message: string) => `${code}|${message}`

export function splitCoded(message: string): { code: ErrorCode; message: string } {
  const m = /^([a-z_]+)\|(.*)$/s.exec(message)
  return m && isErrorCode(m[1]) ? { code: m[1], message: m[2] } : { code: 'validation_error', message }
}

const GENERIC: Record<number, ErrorCode> = {
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
