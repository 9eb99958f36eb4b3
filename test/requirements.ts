// The requirements manifest: one entry per contract rule (../shared/spec/contract.md and decisions.md).
// Tests cite what they prove with verifies('<id>'); test/coverage.test.ts and the end of `npm test`
// report which rules no test cites yet. Pure data: keep the ids stable once cited.
export interface Requirement { source: string; behavior: string }

export const requirements = {
  // Conventions and envelopes
  'envelope.single': { source: 'contract Envelopes', behavior: 'A single object is the object plus meta {request_id, environment}.' },
  'envelope.list': { source: 'contract Envelopes', behavior: 'A list is data[], pagination {limit, has_more, next_cursor}, meta.' },
  'envelope.error': { source: 'contract Envelopes; Errors', behavior: 'Every non-2xx is error {code, message, field, request_id} plus meta.' },
  'envelope.environment': { source: 'contract Envelopes', behavior: 'meta.environment is production on every response, errors included.' },
  'conventions.request-id': { source: 'contract Conventions', behavior: 'Every response carries X-Request-Id; a printable client value of at most 64 characters is used, otherwise req_… is minted.' },
  'conventions.no-store': { source: 'contract Conventions', behavior: 'Responses are Cache-Control: no-store.' },
  'conventions.timestamps': { source: 'contract Conventions', behavior: 'Timestamps are ISO-8601 UTC with Z, in and out; bad input is 400 invalid_date.' },
  'conventions.ids': { source: 'contract Conventions', behavior: 'Ids are prefixed strings prefix_<n>; a malformed id parameter is 400 invalid_id.' },
  'conventions.base-path-alias': { source: 'decisions Base path', behavior: '/api/v1 serves the same handlers as /v1.' },
  // Generic errors
  'errors.not_found': { source: 'decisions Generic 404', behavior: 'Unknown route is 404 not_found with the error envelope, never echoing the path.' },
  'errors.method_not_allowed': { source: 'decisions Generic errors', behavior: 'Wrong method is 405 method_not_allowed with Allow.' },
  'errors.invalid_json': { source: 'decisions Generic errors', behavior: 'Malformed JSON is 400 invalid_json.' },
  'errors.unsupported_media_type': { source: 'decisions Generic errors', behavior: 'A non-JSON body on a JSON route is 415 unsupported_media_type.' },
  'errors.unsupported_field': { source: 'contract Endpoints', behavior: 'An unknown body key is 400 unsupported_field naming the key.' },
  'errors.empty_update': { source: 'contract Endpoints', behavior: 'An empty patch body is 400 empty_update.' },
  'errors.validation_error': { source: 'contract Errors', behavior: 'A bad value is 400 validation_error with field.' },
  'errors.unsupported_filter': { source: 'contract Errors', behavior: 'An unknown query parameter is 400 unsupported_filter.' },
  'errors.payload_too_large': { source: 'contract Limits', behavior: 'JSON body above 2 MB or upload above 10 MB is 413 payload_too_large, refused while streaming.' },
  'errors.internal_error': { source: 'decisions Generic errors', behavior: 'Unexpected failures are 500 internal_error with no internals; random input never causes a 500.' },
  'cursor.signed-and-bound': { source: 'contract GET /conversations rule 3', behavior: 'next_cursor is signed and bound to filter set, sort, limit and credential; other use is 400 invalid_cursor.' },
  // Platform
  'health.body': { source: 'contract Health', behavior: 'GET /health answers status, version 1.0.0, time and components {api, db, transcripts, summaries, webhooks, media}.' },
  'health.down': { source: 'contract Platform', behavior: 'GET /health answers 503 with the Health body when the database is unreachable.' },
  'health.public': { source: 'contract Platform', behavior: 'Platform routes need no credential and are unmetered.' },
  'openapi.document': { source: 'contract Platform', behavior: 'GET /openapi.json and /openapi.yaml describe every route (OpenAPI 3.1) with scope and errors.' },
  'docs.reference': { source: 'contract Platform', behavior: 'GET /docs, /docs/all.md, /docs/pages, /docs/pages/{name}.md and /docs/download serve the reference.' },
  'storage.migrations': { source: 'issue 2 Storage', behavior: 'Committed SQL migrations apply at boot on PGlite and PostgreSQL; data survives a restart.' },
  'jobs.durable': { source: 'issue 2 Job queue', behavior: 'Jobs live in the database, survive a restart and are processed after it.' },
  'plugins.registry': { source: 'issue 2 Plugin registries', behavior: 'Each plugin registry rejects a duplicate name at boot with a clear message.' },
  // Authentication
  'auth.missing_credentials': { source: 'contract Authentication', behavior: 'No header or another scheme is 401 missing_credentials.' },
  'auth.invalid_credentials': { source: 'contract Authentication', behavior: 'Unknown, malformed or revoked credential is 401 invalid_credentials.' },
  'auth.expired_token': { source: 'contract Authentication', behavior: 'A key past expiry is 401 expired_token.' },
  'auth.ip-failure-limit': { source: 'contract Authentication', behavior: 'Unauthenticated failures are limited to 20 per minute per IP (429 rate_limited, Retry-After).' },
  'auth.master-key': { source: 'contract Credential types', behavior: 'The master key has implicit scopes admin:all_accounts, users:manage, credentials:manage, accounts:read, audit:read.' },
  'auth.personal-key-format': { source: 'contract Credential types', behavior: 'Personal keys are svc_sk_live_ + 43 base64url characters; only the SHA-256 is stored; key_prefix is 24 characters.' },
  'auth.scope': { source: 'contract Scopes', behavior: 'A route without its scope is 403 insufficient_scope.' },
  'auth.invalid_scope': { source: 'contract Scopes', behavior: 'An unknown or ungrantable scope is 400 invalid_scope field scopes; master-only scopes never on personal keys.' },
  'auth.account-resolution': { source: 'contract Account resolution', behavior: 'Query account_id, body account_id, X-Svc-Account, then home; any account not on the credential is 403 forbidden_account.' },
  'auth.master-data-route': { source: 'contract Account resolution', behavior: 'The master key on a data route without X-Svc-Account is 403 forbidden_account; with it the audit row has cross_account true.' },
  'auth.ip_allowlist': { source: 'contract Other rules', behavior: 'A request outside ip_allowlist is 403 ip_not_allowed; the client IP is the first hop of X-Forwarded-For.' },
  'auth.expiry-warning': { source: 'contract Other rules', behavior: 'Within 30 days of expiry every response carries X-Svc-Key-Expires-In: <n>d.' },
  'rate.headers': { source: 'contract Limits', behavior: 'Metered responses carry X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset.' },
  'rate.limited': { source: 'contract Limits', behavior: 'Past its class limit a credential gets 429 rate_limited with Retry-After.' },
  // Users, credentials, accounts, audit
  'users.create': { source: 'contract Users', behavior: 'POST /users creates user, subscription and account settings in one transaction; trial sets plan_expires_at 30 days out.' },
  'users.validation': { source: 'contract Users', behavior: 'POST /users: invalid_email, validation_error (plan, currency_code), unsupported_field; 409 email_exists.' },
  'users.read': { source: 'contract Users', behavior: 'GET /users/{usr} answers the User; unknown is 404.' },
  'users.list': { source: 'contract Users', behavior: 'GET /users lists newest first, keyset on (created_at, id), filters status and updated_since.' },
  'users.patch': { source: 'contract Users', behavior: 'PATCH /users/{usr}: status, external_ids merge with null clearing, limits, retention; status trial is 400.' },
  'credentials.create': { source: 'contract Users and credentials', behavior: 'POST /users/{usr}/credentials answers 201 with the secret once.' },
  'credentials.rotate': { source: 'contract States', behavior: 'Rotate mints a successor with the same scopes, account_ids, allowlist; the predecessor expires after 7 days of grace.' },
  'credentials.revoke': { source: 'contract States', behavior: 'DELETE /credentials/{key} revokes at once; the next request is 401 invalid_credentials.' },
  'accounts.read': { source: 'contract Accounts', behavior: 'GET /accounts and /accounts/{acc} answer the Account; another tenant is 404 or 403.' },
  'accounts.patch': { source: 'contract Accounts', behavior: 'PATCH /accounts/{acc} takes external_ids, default_redaction, transcript_retention_days.' },
  'accounts.limits': { source: 'contract Account limits', behavior: 'GET /accounts/{acc}/limits answers quotas and rate limits.' },
  'accounts.usage': { source: 'contract Accounts', behavior: 'GET /accounts/{acc}/usage needs from and to, groups by up to three dimensions.' },
  'accounts.balance': { source: 'contract Balance', behavior: 'GET /accounts/{acc}/balance answers the Balance.' },
  'audit.rows': { source: 'contract Audit', behavior: 'One audit row per metered request; platform routes are not audited; path never holds the query.' },
  'audit.csv': { source: 'contract Audit', behavior: 'GET /audit?format=csv streams up to 50000 rows with the listed columns.' },
  'tenancy.isolation': { source: 'contract Account resolution', behavior: 'Resources of another account answer 404.' },
  // Dashboard origin (decisions "Dashboard origin"; contract "Session-authenticated routes")
  'dashboard.login': { source: 'decisions Dashboard origin', behavior: 'POST /api/auth/login checks e-mail (case-insensitive) and password, answers a session token and sets svc_session (HttpOnly, SameSite=Lax, Secure outside localhost); a wrong e-mail or password is 401 invalid_credentials with one message.' },
  'dashboard.login-failure-limit': { source: 'contract Authentication; decisions Dashboard origin', behavior: 'Failed logins count against the 20 per minute per IP failure limit; past it, login answers 429 rate_limited with Retry-After even for the right password.' },
  'dashboard.session': { source: 'decisions Dashboard origin', behavior: 'Dashboard routes take the svc_session cookie or Authorization: Session <token>; logout, expiry or suspension ends the session (401).' },
  'dashboard.refuses-api-keys': { source: 'decisions Dashboard origin', behavior: 'An API key (personal or master) on a dashboard route is 401.' },
  'dashboard.login-links': { source: 'contract Partners and login; decisions Dashboard origin', behavior: 'POST /users/{usr}/login-links mints a single-use 15-minute link; redeeming it answers a session; used, expired or unknown is 401 invalid_credentials.' },
  'dashboard.api-keys': { source: 'contract Session-authenticated routes', behavior: 'The session routes list, create, edit, rotate and revoke the logged-in user\'s personal live keys; account_id, account_ids and user_id are ignored; master-only scopes are 400 invalid_scope; other people\'s keys are 404.' },
  'dashboard.api-keys-patch': { source: 'contract Session-authenticated routes', behavior: 'PATCH takes scopes (whole set, catalogue check) and expires_in_days (1 to 365 from now), at least one (else 400 validation_error); the secret never changes; a revoked key is 400; a scope removal takes effect on the next request.' },
  'idempotency.header': { source: 'decisions Idempotency-Key header', behavior: 'A POST with a reused Idempotency-Key replays the stored answer with Idempotent-Replayed: true, or 409 idempotency_key_reused for another body.' },
  // Agents, knowledge, conversations, webhooks, MCP
  'agents.build': { source: 'contract Lifecycle step 2', behavior: 'POST /accounts/{acc}/agents/build answers 202 and runs crawl, summary, greeting, instructions.' },
  'agents.patch-whitelist': { source: 'contract Agent', behavior: 'PATCH /agents/{agt} takes exactly the 43 whitelisted fields and bumps agent_version at most once for behavioural ones.' },
  'agents.prompts': { source: 'contract Agents and prompts', behavior: 'Prompt versions are immutable; deploy and restore bump agent_version; labels unique per agent.' },
  'kb.documents': { source: 'contract Knowledge base', behavior: 'POST kb/documents answers 202 processing; ingestion moves it to indexed or failed.' },
  'kb.verbatim': { source: 'contract Runtime knowledge rules 3', behavior: 'Keep-as-is caps: chat 1,000,000, calls 270,000 characters, verbatim_in_calls first.' },
  'kb.url-safety': { source: 'issue 4 URL safety; decisions SVC_ALLOW_PRIVATE_HOSTS', behavior: 'Only http(s) URLs are fetched; private, loopback, link-local, unique-local and service hosts are 400 invalid_url, checked on the resolved addresses of every request and redirect and connected to as checked; SVC_ALLOW_PRIVATE_HOSTS exempts named hosts; every fetch has a timeout and a size cap.' },
  'kb.crawler': { source: 'issue 4 Crawl', behavior: 'The crawler stays on the site, honours robots.txt, caps pages per plan and depth, and turns HTML into clean text.' },
  'kb.reindex': { source: 'contract States', behavior: 'POST kb/reindex answers 202 rebuild_requested; success shows pending_sources 0 and version moved.' },
  'conversations.create': { source: 'contract POST /conversations', behavior: 'POST /conversations answers 201 with the listed fields, stamps agent_version, prompt_version, model.' },
  'conversations.messages': { source: 'contract Other conversation routes', behavior: 'POST messages answers {turn, usage}; 409 turn_in_progress while a turn runs.' },
  'conversations.list': { source: 'contract GET /conversations', behavior: 'GET /conversations filters, default 30-day window, keyset cursor bound to the query.' },
  'conversations.deleted': { source: 'decisions Soft delete', behavior: 'Soft-deleted conversations answer 410 and appear in GET /conversations/deleted.' },
  'webhooks.signature': { source: 'contract Events rule 2', behavior: 'Deliveries are signed HMAC-SHA256 over "<timestamp>.<body>" with the whsec_ secret.' },
  'webhooks.retries': { source: 'decisions Retries', behavior: 'Failed deliveries retry on the schedule and can be replayed with the same event id.' },
  'mcp.connector': { source: 'contract Assistant connector', behavior: 'POST /mcp serves MCP statelessly with JSON responses; GET answers 405.' },
  'oauth.server': { source: 'decisions OAuth client rules', behavior: 'DCR, authorization code with PKCE S256, rotating refresh tokens, revocation.' },
} satisfies Record<string, Requirement>

export type RequirementId = keyof typeof requirements

/** Declares which contract rules a test proves; an unknown id fails the test at once. */
export function verifies(...ids: RequirementId[]): void {
  for (const id of ids) if (!(id in requirements)) throw new Error(`unknown requirement id: ${id}`)
}
