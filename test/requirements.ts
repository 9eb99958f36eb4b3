// The requirements manifest: one entry per contract rule (../shared/spec/contract.md and decisions.md).
// Tests cite what they prove with verifies('<id>'); test/coverage.test.ts and the end of `npm test`
// report which rules no test cites yet. Pure data: keep the ids stable once cited.
import { recordCitations } from './citations'

export interface Requirement {
  source: string
  behavior: string
  /** A rule about one engine only (the embedded database cannot be unreachable while the process runs);
   *  every other rule must be proven by a test that runs on both. */
  engines?: readonly ('pglite' | 'postgres')[]
  /** Proven in a real browser (test/browser): excused from the `npm test` gate when Chromium is absent,
   *  unless SVC_REQUIRE_BROWSER=1 (CI), see test/helpers/browser.ts. */
  browser?: true
}

export const requirements = {
  // Conventions and envelopes
  'envelope.single': {
    source: 'contract Envelopes',
    behavior: 'A single object is the object plus meta {request_id, environment}.',
  },
  'envelope.list': {
    source: 'contract Envelopes',
    behavior: 'A list is data[], pagination {limit, has_more, next_cursor}, meta.',
  },
  'envelope.error': {
    source: 'contract Envelopes; Errors',
    behavior: 'Every non-2xx is error {code, message, field, request_id} plus meta.',
  },
  'envelope.environment': {
    source: 'contract Envelopes',
    behavior: 'meta.environment is production on every response, errors included.',
  },
  'conventions.request-id': {
    source: 'contract Conventions',
    behavior:
      'Every response carries X-Request-Id; a printable client value of at most 64 characters is used, otherwise req_… is minted.',
  },
  'conventions.no-store': { source: 'contract Conventions', behavior: 'Responses are Cache-Control: no-store.' },
  'conventions.timestamps': {
    source: 'contract Conventions',
    behavior: 'Timestamps are ISO-8601 UTC with Z, in and out; bad input is 400 invalid_date.',
  },
  'conventions.ids': {
    source: 'contract Conventions',
    behavior: 'Ids are prefixed strings prefix_<n>; a malformed id parameter is 400 invalid_id.',
  },
  'conventions.base-path-alias': {
    source: 'decisions Base path',
    behavior: '/api/v1 serves the same handlers as /v1.',
  },
  // Generic errors
  'errors.not_found': {
    source: 'decisions Generic 404',
    behavior: 'Unknown route is 404 not_found with the error envelope, never echoing the path.',
  },
  'errors.method_not_allowed': {
    source: 'decisions Generic errors',
    behavior: 'Wrong method is 405 method_not_allowed with Allow.',
  },
  'errors.invalid_json': { source: 'decisions Generic errors', behavior: 'Malformed JSON is 400 invalid_json.' },
  'errors.unsupported_media_type': {
    source: 'decisions Generic errors',
    behavior: 'A non-JSON body on a JSON route is 415 unsupported_media_type.',
  },
  'errors.unsupported_field': {
    source: 'contract Endpoints',
    behavior: 'An unknown body key is 400 unsupported_field naming the key.',
  },
  'errors.empty_update': { source: 'contract Endpoints', behavior: 'An empty patch body is 400 empty_update.' },
  'errors.validation_error': { source: 'contract Errors', behavior: 'A bad value is 400 validation_error with field.' },
  'errors.unsupported_filter': {
    source: 'contract Errors',
    behavior: 'An unknown query parameter is 400 unsupported_filter.',
  },
  'errors.payload_too_large': {
    source: 'contract Limits',
    behavior: 'JSON body above 2 MB or upload above 10 MB is 413 payload_too_large, refused while streaming.',
  },
  'errors.internal_error': {
    source: 'decisions Generic errors',
    behavior: 'Unexpected failures are 500 internal_error with no internals; random input never causes a 500.',
  },
  'cursor.signed-and-bound': {
    source: 'contract GET /conversations rule 3',
    behavior:
      'next_cursor is signed and bound to filter set, sort, limit and credential; other use is 400 invalid_cursor.',
  },
  // Platform
  'health.body': {
    source: 'contract Health',
    behavior:
      'GET /health answers status, version 1.0.0, time and components {api, db, transcripts, summaries, webhooks, media}.',
  },
  'health.down': {
    source: 'contract Platform',
    behavior: 'GET /health answers 503 with the Health body when the database is unreachable.',
    engines: ['postgres'],
  },
  'health.probe': {
    source: 'issue 14 Health',
    behavior:
      'GET /health answers from a database probe at most 1 s old (one probe per second however many callers) and reports down within 2 s of the database going away.',
    engines: ['postgres'],
  },
  // Hot paths (issue 14)
  'cache.principal.same-instance': {
    source: 'issue 14 Authentication without a lookup per request',
    behavior:
      'Keys, users and accounts are cached per instance, and the instance that revokes, rotates or edits a key, or suspends or resumes a tenant, drops its entries before it answers: the very next request sees the change.',
  },
  'cache.principal.cross-instance': {
    source: 'issue 14 Authentication without a lookup per request',
    behavior:
      'Another instance on the same PostgreSQL sees a revocation, a key edit or a suspension within milliseconds (LISTEN/NOTIFY, also from row triggers, so even SQL written by hand reaches it).',
    engines: ['postgres'],
  },
  'chat.turn-atomic': {
    source: 'issue 14 The chat turn',
    behavior:
      'A turn that fails after its claim leaves nothing half-written: no visitor turn without its answer, no usage, the chat_messages quota unit given back, and the conversation free for the next message.',
  },
  'chat.turn-crash': {
    source: 'issue 19: crashes lose and duplicate nothing (finding of the chaos test)',
    behavior:
      "A message whose instance dies after the turn was claimed (its quota unit taken, its idempotency_key stored without a response) is written exactly once when retried with the same idempotency_key after the claim lapses (it was 409 turn_in_progress for 24 hours), and the chat_messages counter counts it once (the dead claim's unit is inherited, not taken again).",
  },
  'idempotency.retry-later': {
    source: 'issue 19: crashes (finding of the chaos test: a retried message answered a stored 409 for 24 hours)',
    behavior:
      'A refusal that means "not now" (409 turn_in_progress or build_in_progress, 429 rate_limited or quota_exceeded) is not stored under the request\'s Idempotency-Key: a retry with the same key once the cause has passed runs the request (and its answer is then the one stored).',
  },
  'builds.lock-order': {
    source: 'issue 19: load and crashes (finding of the chaos test: a rebuild deadlocked with conversation creates)',
    engines: ['postgres'],
    behavior:
      "A rebuild fired together with conversation creates on the same agent never deadlocks: the rebuild answers 202 and every create 201 (the agent and account row locks are FOR NO KEY UPDATE, which the creates' foreign-key checks do not wait for).",
  },
  'kb.lock-order': {
    source:
      'issue 19: load and crashes (finding of the 15-minute chaos run: documents failed "An internal error stopped the work")',
    engines: ['postgres'],
    behavior:
      'Documents added while the knowledge summary is being written (a build, a reindex or PATCH kb/summary) and while documents are patched are all indexed, and every summary write and patch answers 2xx: every transaction that writes documents and the summary locks the agent row first, and an ingest that still loses a lock race runs again instead of failing the document.',
  },
  'idempotency.fenced': {
    source: 'issue 19: crashes (the 15-minute chaos run wrote twice under one Idempotency-Key)',
    engines: ['postgres'],
    behavior:
      'One write per Idempotency-Key, also when the first request is slow past the 5-minute takeover or dies or fails after its write: every transaction of a keyed request marks the claim committed in the same transaction, a request whose claim was taken over cannot commit (409 idempotency_key_in_use, nothing kept), and a committed claim without an answer is never run again (409 idempotency_answer_lost).',
  },
  'calls.owner-died': {
    source: 'issue 19: crashes (inbound calls of a killed instance stayed in_progress for 4 hours)',
    engines: ['postgres'],
    behavior:
      "A voice conversation (inbound call, voice chat, an outbound call's media) names the instance that holds its session; when that instance stops beating, another one closes the conversation as its session would have (status completed, end_reason interrupted), which frees the account's line.",
  },
  'health.public': { source: 'contract Platform', behavior: 'Platform routes need no credential and are unmetered.' },
  'openapi.document': {
    source: 'contract Platform',
    behavior: 'GET /openapi.json and /openapi.yaml describe every route (OpenAPI 3.1) with scope and errors.',
  },
  'docs.reference': {
    source: 'contract Platform',
    behavior: 'GET /docs, /docs/all.md, /docs/pages, /docs/pages/{name}.md and /docs/download serve the reference.',
  },
  // Operations deliverables of issue 33 (the files in ops/ and the served guide)
  'ops.dashboard': {
    source: 'issue 33 (a Grafana dashboard JSON in ops/ built on these series); decisions Prometheus metrics',
    behavior:
      'ops/grafana/svc-overview.json is an importable dashboard (a prometheus datasource variable, unique panel ids) whose expressions name only series the service exports, use every svc_* series, read counters through rate() and quantiles through histogram_quantile over _bucket summed by le.',
  },
  'ops.scrape-config': {
    source: 'issue 33 (shows how to scrape and trace); decisions Prometheus metrics',
    behavior:
      'ops/prometheus.yml scrapes /metrics with a bearer credential read from a file, and ops/otel-collector.yaml receives OTLP over HTTP into a traces pipeline; both parse as YAML.',
  },
  'ops.production-guide': {
    source: 'issue 33 (a docs page, "Running in production", that shows how to scrape and trace)',
    behavior:
      'The reference serves "Running in production" (GET /docs/pages/running-in-production.md, listed by /docs/pages and linked from the overview and the HTML page): it names /metrics, SVC_METRICS_TOKEN, every svc_* series, OTEL_EXPORTER_OTLP_ENDPOINT and traceparent, and names no SVC_* variable the configuration does not read.',
  },
  'storage.migrations': {
    source: 'issue 2 Storage',
    behavior: 'Committed SQL migrations apply at boot on PGlite and PostgreSQL; data survives a restart.',
  },
  'storage.first-boot-snapshot': {
    source: 'issue 36 (first boot ≤ 5 s on PGlite)',
    // The snapshot is the embedded database's: a PostgreSQL boot never reads it.
    engines: ['pglite'],
    behavior:
      "A new embedded data dir is made from the build's snapshot: the committed migrations and pg-boss's schema with every job kind's queue are in it before the process starts (none is applied or created at boot), its queue schema is the one pg-boss makes itself, a migration newer than the snapshot still applies on top of it, an existing data dir is opened as it is, and another SVC_QUEUE_SCHEMA (or other jobs) drops the snapshot's queue schema so pg-boss makes its own.",
  },
  'jobs.durable': {
    source: 'issue 2 Job queue',
    behavior: 'Jobs live in the database, survive a restart and are processed after it.',
  },
  'plugins.registry': {
    source: 'issue 2 Plugin registries',
    behavior: 'Each plugin registry rejects a duplicate name at boot with a clear message.',
  },
  'plugins.boot-providers': {
    source: 'issue 13 Providers checked at boot',
    behavior:
      'The configured chat engine and mailer are resolved at boot: an unknown SVC_CHAT_ENGINE or SVC_MAIL stops the process with a message naming the setting and the known names.',
  },
  'plugins.contract': {
    source: 'architecture rule 6; issue 4 Capabilities',
    behavior:
      "Every file of capabilities/ and providers/chat|voice passes its kind's contract suite; adding one is one file plus its test.",
  },
  'plugins.kit.public': {
    source: 'decisions Plugin packages; issue 35',
    behavior:
      'The define* functions and plugin contract types come from one public kit (packages/kit, @svc/plugin-kit) that imports nothing host-internal; the host re-exports them, and the packed kit ships compiled JavaScript with declarations.',
  },
  'plugins.packages.load': {
    source: 'decisions Plugin packages; issue 35',
    behavior:
      'SVC_PLUGINS (npm package names or paths) is read at boot; each default export made by definePlugin registers its capabilities and providers exactly as in-tree ones, and a packaged provider is chosen by its name (SVC_SPEECH=acme).',
  },
  'plugins.packages.boot-errors': {
    source: 'decisions Plugin packages; issue 35',
    behavior:
      'A plugin package that cannot be found, has no default export, is no definePlugin value or fails the boot checks stops the boot with one line (no stack trace) naming the SVC_PLUGINS entry, the plugin and the problem; so does an in-tree plugin, naming its file.',
  },
  'plugins.packages.duplicate': {
    source: 'decisions Plugin packages; issue 35',
    behavior:
      'Two plugins with one name, or a packaged capability or provider whose name an in-tree file or another package already defines, stop the boot with one line naming both.',
  },
  'plugins.packages.roundtrip': {
    source: 'decisions Plugin packages; issue 35',
    behavior:
      'The example plugin package is packed, installed offline in a temporary folder with the packed kit, loaded through SVC_PLUGINS into the built server: its capability is listed and can be enabled on an agent, and its speech provider transcribes a simulated inbound call.',
  },
  'plugins.packages.blob': {
    source: 'spec decisions Plugin packages: providers {…, blob?}',
    behavior:
      "A plugin may provide blob providers (defineBlobProvider: open({url, dir}) → put/get/remove); SVC_BLOB_DRIVER names one (the host's own are fs and s3, now in-tree providers), and uploads are stored and read back through it; an unknown name, or a store whose open() throws, stops the boot with one line. The kit's blobChecks hold every provider to the byte-exact round trip.",
  },
  'docs.node-version': {
    source: 'issue 35 Align the Node version in the README with what the dependencies need',
    behavior:
      "The README's Node versions are package.json's engines, and it names every locked package whose engines exclude that minimum (npm ci's EBADENGINE warnings on Node 20), with why each is harmless.",
  },
  'plugins.contract.finder': {
    source: 'issue 35 Contract suites find plugins exactly as the build does',
    behavior:
      'One finder (scripts/plugin-files.mjs) lists plugin files for the build and for the contract test: .ts files at any depth except "_" helpers, so a capability at capabilities/acme/book.ts is served and contract-checked, and a broken one fails its checks.',
  },
  'plugins.contract.kit-suites': {
    source: 'issue 35 A public kit … its testing entry exporting the contract suites',
    behavior:
      "@svc/plugin-kit/testing exports framework-agnostic contract suites (lists of named checks: capabilityChecks, speechChecks, pluginChecks; registerChecks with any framework's it, runChecks) that in-tree files and packages run alike; pluginChecks checks every capability and speech provider a plugin holds.",
  },
  'plugins.contract.speech-rate': {
    source: 'issue 35 check that audio is really at the rate it claims (duration and pitch)',
    behavior:
      'The speech suite synthesizes one text at 8, 16 and 24 kHz and fails a provider whose durations or pitch differ by more than 1.25× between rates: audio labelled with the requested rate but never resampled does not pass.',
  },
  'plugins.contract.synthesis-only': {
    source: 'issue 35 a synthesis-only mode',
    behavior:
      "A speech provider may omit transcribe: the speech suite's 'synthesis' mode checks it (with an optional round trip through another provider's transcription), the boot accepts it for SVC_TTS and refuses it as SVC_STT with one line.",
  },
  'plugins.intents.local-engine': {
    source: 'spec decisions Plugin packages; issue 35 Capability intents',
    behavior:
      "The local engine calls any enabled tool whose intents match the visitor's message (a pattern's named groups, fixed arguments and fills from the message, converted to the parameters' types), only when the arguments hold what the tool requires; the README's book_table fires offline, and a built-in capability fires through its intent in a chat turn.",
  },
  'plugins.intents.validation': {
    source: 'spec decisions Plugin packages; decisions Hostile input',
    behavior:
      'Intents are checked as capabilities are registered: a pattern that is not RE2 (linear-time) syntax or too complex, a group, argument, fill or oneOf naming no parameter, or an intent with neither pattern nor examples stops the boot with one line naming the capability; visitor text is matched on at most 2,000 characters.',
  },
  'plugins.docs.guide': {
    source: 'issue 35 Docs: a Writing a plugin page on /v1/docs',
    behavior:
      "/v1/docs serves a 'Writing a plugin' page (listed, linked from the overview): plugins inside the tree, a capability, intents and the local engine's tool rule, testing, packages, errors; its book_table example fires offline.",
  },
  'plugins.capabilities.phone': {
    source: 'issue 35 libphonenumber in the three capabilities',
    behavior:
      'capture_lead, place_order and create_ticket read phone numbers with libphonenumber: international numbers and national ones with their trunk prefix are phone numbers, a date, a time or an order number is not, in arguments and in what a visitor writes.',
  },
  'engine.local': {
    source: 'decisions Chat engine local',
    behavior:
      'The local engine is offline and deterministic: extractive summary, template greeting and prompts, lexical answers, tools by intent, unanswered when nothing matches, model local-retrieval-1.',
  },
  'engine.openai': {
    source: 'decisions SVC_CHAT_ENGINE',
    behavior:
      'The openai engine speaks any OpenAI-compatible /chat/completions endpoint (OPENAI_BASE_URL, OPENAI_API_KEY), maps tools, retries once on 429/5xx.',
  },
  // Authentication
  'auth.missing_credentials': {
    source: 'contract Authentication',
    behavior: 'No header or another scheme is 401 missing_credentials.',
  },
  'auth.invalid_credentials': {
    source: 'contract Authentication',
    behavior: 'Unknown, malformed or revoked credential is 401 invalid_credentials.',
  },
  'auth.expired_token': { source: 'contract Authentication', behavior: 'A key past expiry is 401 expired_token.' },
  'auth.ip-failure-limit': {
    source: 'contract Authentication',
    behavior: 'Unauthenticated failures are limited to 20 per minute per IP (429 rate_limited, Retry-After).',
  },
  'auth.master-key': {
    source: 'contract Credential types',
    behavior:
      'The master key has implicit scopes admin:all_accounts, users:manage, credentials:manage, accounts:read, audit:read.',
  },
  'auth.personal-key-format': {
    source: 'contract Credential types',
    behavior:
      'Personal keys are svc_sk_live_ + 43 base64url characters; only the SHA-256 is stored; key_prefix is 24 characters.',
  },
  'auth.scope': { source: 'contract Scopes', behavior: 'A route without its scope is 403 insufficient_scope.' },
  'auth.invalid_scope': {
    source: 'contract Scopes',
    behavior:
      'An unknown or ungrantable scope is 400 invalid_scope field scopes; master-only scopes never on personal keys.',
  },
  'auth.account-resolution': {
    source: 'contract Account resolution',
    behavior:
      'Query account_id, body account_id, X-Svc-Account, then home; any account not on the credential is 403 forbidden_account.',
  },
  'auth.master-data-route': {
    source: 'contract Account resolution',
    behavior:
      'The master key on a data route without X-Svc-Account is 403 forbidden_account; with it the audit row has cross_account true.',
  },
  'auth.ip_allowlist': {
    source: 'contract Other rules',
    behavior:
      'A request outside ip_allowlist is 403 ip_not_allowed; the client IP is the first hop of X-Forwarded-For.',
  },
  'auth.expiry-warning': {
    source: 'contract Other rules',
    behavior: 'Within 30 days of expiry every response carries X-Svc-Key-Expires-In: <n>d.',
  },
  'rate.headers': {
    source: 'contract Limits',
    behavior: 'Metered responses carry X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset.',
  },
  'rate.limited': {
    source: 'contract Limits',
    behavior: 'Past its class limit a credential gets 429 rate_limited with Retry-After.',
  },
  // Users, credentials, accounts, audit
  'users.create': {
    source: 'contract Users',
    behavior:
      'POST /users creates user, subscription and account settings in one transaction; trial sets plan_expires_at 30 days out.',
  },
  'users.validation': {
    source: 'contract Users',
    behavior:
      'POST /users: invalid_email, validation_error (plan, currency_code), unsupported_field; 409 email_exists.',
  },
  'users.read': { source: 'contract Users', behavior: 'GET /users/{usr} answers the User; unknown is 404.' },
  'users.list': {
    source: 'contract Users',
    behavior: 'GET /users lists newest first, keyset on (created_at, id), filters status and updated_since.',
  },
  'users.patch': {
    source: 'contract Users',
    behavior:
      'PATCH /users/{usr}: status, external_ids merge with null clearing, limits, retention; status trial is 400.',
  },
  'credentials.create': {
    source: 'contract Users and credentials',
    behavior: 'POST /users/{usr}/credentials answers 201 with the secret once.',
  },
  'credentials.rotate': {
    source: 'contract States',
    behavior:
      'Rotate mints a successor with the same scopes, account_ids, allowlist; the predecessor expires after 7 days of grace.',
  },
  'credentials.revoke': {
    source: 'contract States',
    behavior: 'DELETE /credentials/{key} revokes at once; the next request is 401 invalid_credentials.',
  },
  'accounts.read': {
    source: 'contract Accounts',
    behavior: 'GET /accounts and /accounts/{acc} answer the Account; another tenant is 404 or 403.',
  },
  'accounts.patch': {
    source: 'contract Accounts',
    behavior: 'PATCH /accounts/{acc} takes external_ids, default_redaction, transcript_retention_days.',
  },
  'accounts.limits': {
    source: 'contract Account limits',
    behavior: 'GET /accounts/{acc}/limits answers quotas and rate limits.',
  },
  'accounts.usage': {
    source: 'contract Accounts',
    behavior: 'GET /accounts/{acc}/usage needs from and to, groups by up to three dimensions.',
  },
  'accounts.balance': { source: 'contract Balance', behavior: 'GET /accounts/{acc}/balance answers the Balance.' },
  'audit.rows': {
    source: 'contract Audit',
    behavior: 'One audit row per metered request; platform routes are not audited; path never holds the query.',
  },
  'audit.csv': {
    source: 'contract Audit',
    behavior: 'GET /audit?format=csv streams up to 50000 rows with the listed columns.',
  },
  'tenancy.isolation': { source: 'contract Account resolution', behavior: 'Resources of another account answer 404.' },
  // Dashboard origin (decisions "Dashboard origin"; contract "Session-authenticated routes")
  'dashboard.login': {
    source: 'decisions Dashboard origin',
    behavior:
      'POST /api/auth/login checks e-mail (case-insensitive) and password, answers a session token and sets svc_session (HttpOnly, SameSite=Lax, Secure outside localhost); a wrong e-mail or password is 401 invalid_credentials with one message.',
  },
  'dashboard.login-failure-limit': {
    source: 'contract Authentication; decisions Dashboard origin',
    behavior:
      'Failed logins count against the 20 per minute per IP failure limit; past it, login answers 429 rate_limited with Retry-After even for the right password.',
  },
  'dashboard.session': {
    source: 'decisions Dashboard origin',
    behavior:
      'Dashboard routes take the svc_session cookie or Authorization: Session <token>; logout, expiry or suspension ends the session (401).',
  },
  'dashboard.refuses-api-keys': {
    source: 'decisions Dashboard origin',
    behavior: 'An API key (personal or master) on a dashboard route is 401.',
  },
  'dashboard.login-links': {
    source: 'contract Partners and login; decisions Dashboard origin',
    behavior:
      'POST /users/{usr}/login-links mints a single-use 15-minute link; redeeming it answers a session; used, expired or unknown is 401 invalid_credentials.',
  },
  'dashboard.api-keys': {
    source: 'contract Session-authenticated routes',
    behavior:
      "The session routes list, create, edit, rotate and revoke the logged-in user's personal live keys; account_id, account_ids and user_id are ignored; master-only scopes are 400 invalid_scope; other people's keys are 404.",
  },
  'dashboard.api-keys-patch': {
    source: 'contract Session-authenticated routes',
    behavior:
      'PATCH takes scopes (whole set, catalogue check) and expires_in_days (1 to 365 from now), at least one (else 400 validation_error); the secret never changes; a revoked key is 400; a scope removal takes effect on the next request.',
  },
  'idempotency.header': {
    source: 'decisions Idempotency-Key header',
    behavior:
      'A POST with a reused Idempotency-Key replays the stored answer with Idempotent-Replayed: true, or 409 idempotency_key_reused for another body.',
  },
  // Agents, knowledge, conversations, webhooks, MCP
  'catalogue.voices': {
    source: 'contract Widget and voice',
    behavior:
      "GET /voices lists every provider's voices (voice_id, name, locale, gender, preview_url, provider, model), filtered by provider and locale.",
  },
  'catalogue.capabilities': {
    source: 'contract Lifecycle step 9',
    behavior:
      'GET /capabilities and /outbound-capabilities list the registered capabilities with JSON Schema parameters, needs and api_chat.',
  },
  'agents.build': {
    source: 'contract Lifecycle step 2',
    behavior: 'POST /accounts/{acc}/agents/build answers 202 and runs crawl, summary, greeting, instructions.',
  },
  'agents.patch-whitelist': {
    source: 'contract Agent',
    behavior:
      'PATCH /agents/{agt} takes exactly the 43 whitelisted fields and bumps agent_version at most once for behavioural ones.',
  },
  'agents.read': {
    source: 'contract Agent; Agents and prompts',
    behavior:
      'GET /agents/{agt} answers every documented key (null when unknown) with nested voice and widget (has_public_token, never the token) and the resolved model; GET /accounts/{acc}/agents answers {account_id, agents[], meta} with enriched summaries.',
  },
  'agents.aliases': {
    source: 'contract Aliases',
    behavior:
      'GET and PATCH /accounts/{acc}/agents/{agt} and POST /accounts/{acc}/agents/{agt}/prompt behave as the flat forms.',
  },
  'agents.widget': {
    source: 'contract Widget; States Widget token',
    behavior:
      'A widget token is minted when allowed_domains becomes non-empty; only GET widget shows it; regenerate-token replaces it at once; widget patches do not bump agent_version.',
  },
  'agents.voice': {
    source: 'contract Voice configuration; Widget and voice',
    behavior:
      'PATCH /agents/{agt}/voice bumps agent_version and mirrors voice_id, voice_locale, speaking_rate, barge_in, end_of_speech_ms and style onto the agent.',
  },
  'agents.refinement-rules': {
    source: 'contract Lifecycle step 8; issue 4 Refinement rules',
    behavior:
      'Refinement rules are stored normalised with repeats reported as duplicates; conflicts with other rules and with the prompts are reported (the rules are still saved); the prompt-space cost of each rule is shown; injectRules appends them to every surface prompt.',
  },
  'agents.capabilities': {
    source: 'contract Lifecycle step 9; issue 4 Capabilities',
    behavior:
      'PATCH /agents/{agt} refuses an unregistered capability (field capabilities.<i>) and an enabled capability whose completion is missing or malformed (400 validation_error field capability_settings.<key>), writing nothing.',
  },
  'agents.versions': {
    source: 'contract GET /agent-versions',
    behavior:
      'GET /agent-versions lists deploy markers newest first, keyset on (deployed_at, id), filtered by account_id, agent_id, from and to.',
  },
  'tenancy.agents': {
    source: 'contract Account resolution; Errors',
    behavior:
      'An agent of another account answers 404 agent_not_found; the master key needs X-Svc-Account on agent routes (else 403 forbidden_account).',
  },
  'agents.prompts': {
    source: 'contract Agents and prompts',
    behavior: 'Prompt versions are immutable; deploy and restore bump agent_version; labels unique per agent.',
  },
  'kb.documents': {
    source: 'contract Knowledge base',
    behavior: 'POST kb/documents answers 202 processing; ingestion moves it to indexed or failed.',
  },
  'kb.keep-verbatim-flags': {
    source: 'contract Lifecycle step 4; decisions Knowledge create',
    behavior:
      'keep_verbatim and verbatim_in_calls are set on create or by PATCH kb/documents/{doc}; a text opening with IMPORTANT INSTRUCTION FOR AI ASSISTANT is keep-as-is automatically.',
  },
  'kb.crawl': {
    source: 'contract States KB document; decisions Knowledge create',
    behavior:
      '{url, mode: site} answers 202 with doc_id null and a crawl_id, and its pages appear as doc_c documents; a page that cannot be fetched fails with an error.',
  },
  'tenancy.kb': {
    source: 'contract Account resolution',
    behavior: "Another account's agent or document answers 404 on the kb/documents routes.",
  },
  'kb.verbatim': {
    source: 'contract Runtime knowledge rules 3',
    behavior: 'Keep-as-is caps: chat 1,000,000, calls 270,000 characters, verbatim_in_calls first.',
  },
  'kb.url-safety': {
    source: 'issue 4 URL safety; decisions SVC_ALLOW_PRIVATE_HOSTS',
    behavior:
      'Only http(s) URLs are fetched; private, loopback, link-local, unique-local and service hosts are 400 invalid_url, checked on the resolved addresses of every request and redirect and connected to as checked; SVC_ALLOW_PRIVATE_HOSTS exempts named hosts; every fetch has a timeout and a size cap.',
  },
  'kb.crawler': {
    source: 'issue 4 Crawl',
    behavior:
      'The crawler stays on the site, honours robots.txt, caps pages per plan and depth, and turns HTML into clean text.',
  },
  'kb.reindex': {
    source: 'contract States',
    behavior: 'POST kb/reindex answers 202 rebuild_requested; success shows pending_sources 0 and version moved.',
  },
  'kb.summary': {
    source: 'contract Lifecycle step 6; States KB summary',
    behavior:
      'GET/PATCH kb/summary read or replace the text (kb:read, kb:write); a manual replace moves the version, keeps stale, and the next reindex overwrites it.',
  },
  'kb.status': {
    source: 'contract Knowledge status',
    behavior:
      'GET kb/status shows summary {status, stale, last_job, pending_sources, version}, crawl, vector_sync null and keep-as-is sizes per surface with calls.dropped; stale never clears on its own.',
  },
  'kb.assembly': {
    source: 'issue 5 Runtime prompt assembly; contract Runtime knowledge rules 1–3',
    behavior:
      'One pure function builds the knowledge block of a surface: the summary, then the keep-as-is texts in order within the surface cap.',
  },
  'conversations.create': {
    source: 'contract POST /conversations',
    behavior: 'POST /conversations answers 201 with the listed fields, stamps agent_version, prompt_version, model.',
  },
  'conversations.messages': {
    source: 'contract Other conversation routes',
    behavior: 'POST messages answers {turn, usage}; 409 turn_in_progress while a turn runs.',
  },
  'ops.metrics.auth': {
    source: 'decisions Prometheus metrics',
    behavior:
      'GET /metrics answers the Prometheus text format for the master key or SVC_METRICS_TOKEN; no credential, a wrong one or a tenant API key is 401; the token reads nothing else.',
  },
  'ops.metrics.series': {
    source: 'decisions Prometheus metrics',
    behavior:
      'The named series exist; a request counts under its route template (the /api/v1 alias under /v1, an unmatched path as (unmatched)); no label carries an id, a tenant or a raw path.',
  },
  'ops.metrics.work': {
    source: 'decisions Prometheus metrics',
    behavior:
      'A chat turn, a simulated call (every voice stage), jobs and a webhook delivery move their series; svc_calls_active and svc_db_pool_connections report live values.',
  },
  'conversations.turn-holds': {
    source: 'decisions Turn holds',
    behavior:
      "A chat turn's hold left by a dead instance is given back with its chat_messages unit once it lapses (the sweep every 10 s), so the day's counter equals the turns written; a live hold is kept.",
  },
  'conversations.greeting': {
    source: 'contract POST /conversations',
    behavior:
      'send_greeting writes turn 0 (greeting, latency_ms null) in the order greeting_initial, public_chat_greeting, greeting, generic; identity, custom and external_session_id apply first.',
  },
  'conversations.identity': {
    source: 'decisions Identity validation',
    behavior:
      'identity values of the wrong type are 400 invalid_type naming the key; bad email invalid_email; non-E.164 phone invalid_phone; identify merges.',
  },
  'conversations.knowledge': {
    source: 'contract Runtime knowledge rules 1, 2, 5',
    behavior:
      'Chat answers from the knowledge summary plus keep-as-is documents on the one configured engine; unanswered when nothing matches.',
  },
  'conversations.tools': {
    source: 'contract Lifecycle step 11; issue 6 Tools',
    behavior:
      'An API-chat capability the engine calls runs for real: the record is stored on the conversation, e-mailed through the mailer (outbox by default) and the turn records the call and result.',
  },
  'conversations.idempotency': {
    source: 'decisions Idempotency',
    behavior:
      'POST messages idempotency_key: same text replays the stored response with Idempotent-Replayed: true and no new turn or bill; other text 409 idempotency_key_reused.',
  },
  'conversations.end': {
    source: 'decisions Conversation end',
    behavior:
      'POST end sets completed and ended_at, emits conversation.ended once, and the summary job writes the structured summary and summary.ready.',
  },
  'conversations.billing': {
    source: 'contract States Subscription; Limits',
    behavior:
      'A balance check on create and every turn answers 402 payment_required when blocked; usage rows per session carry tokens and cost.',
  },
  'mail.outbox': {
    source: 'decisions SVC_MAIL',
    behavior:
      "The default outbox mailer stores each e-mail; GET /mail/outbox lists the account's messages newest first.",
  },
  'conversations.list': {
    source: 'contract GET /conversations',
    behavior: 'GET /conversations filters, default 30-day window, keyset cursor bound to the query.',
  },
  'conversations.deleted': {
    source: 'decisions Soft delete',
    behavior: 'Soft-deleted conversations answer 410 and appear in GET /conversations/deleted.',
  },
  'conversations.read': {
    source: 'contract GET /conversations/{conv}, Other conversation routes',
    behavior:
      'Detail with include and transcript_format=text; 404 for another account; 410 conversation_deleted; summaries-only keys use /summary; recording 404 or a signed URL.',
  },
  'conversations.redaction': {
    source: 'decisions Redaction',
    behavior:
      'redact masks e-mails, phone numbers, Luhn-valid card numbers and IBANs keeping the last 2 characters; default from the account default_redaction.',
  },
  'conversations.import': {
    source: 'contract Other conversation routes; runtime rule 4',
    behavior:
      'POST /conversations/import creates a completed conv_u conversation with its summary; the last 3 calls within 30 days feed the inbound phone history block.',
  },
  'conversations.retention': {
    source: 'decisions Retention key, Soft delete',
    behavior:
      'The retention sweep soft-deletes conversations older than transcript_retention_days with tombstones (reason retention) and conversation.deleted events.',
  },
  'metrics.conversations': {
    source: 'contract Metrics paths; Lifecycle step 13; issue 6',
    behavior:
      'GET /metrics/conversations (metrics:read, rate class metrics) counts the non-deleted conversations of the window (default 30 days) per agent, agent_version or UTC day: conversations, completed, outcomes per Outcome, escalated, unanswered rate, latency percentiles (percentile_cont) and tokens, with the deploy markers of the window; another account is never counted.',
  },
  'metrics.summary': {
    source: 'contract Metrics paths; issue 6',
    behavior:
      'GET /metrics answers one overview object for the window: conversation figures, active agents, tokens, cost_usd and voice_seconds of the billed sessions.',
  },
  'webhooks.signature': {
    source: 'contract Events rule 2',
    behavior: 'Deliveries are signed HMAC-SHA256 over "<timestamp>.<body>" with the whsec_ secret.',
  },
  'webhooks.retries': {
    source: 'decisions Retries',
    behavior: 'Failed deliveries retry on the schedule and can be replayed with the same event id.',
  },
  'webhooks.endpoints': {
    source: 'contract Webhook endpoint; Webhooks',
    behavior:
      'POST/GET/PATCH webhook endpoints (whk_<n>, environment live, api_version v1); the whsec_ secret is returned once on create and rotate.',
  },
  'webhooks.secrets': {
    source: 'contract Other rules (secrets)',
    behavior: 'Webhook secrets are encrypted at rest and never returned by reads or listings.',
  },
  'webhooks.retention': {
    source: 'developers guide (production use); docs/decisions.md Webhooks',
    behavior:
      'Dispatched events are deleted after 7 days and final deliveries after 30; pending and retrying deliveries and recent history stay.',
  },
  'webhooks.validation': {
    source: 'contract Endpoints; decisions Events',
    behavior:
      'Unknown fields, empty patches, unknown event names and unsafe or non-https URLs (400 invalid_url) are refused.',
  },
  'webhooks.events': {
    source: 'contract Events; decisions Conversation end',
    behavior:
      'A real conversation delivers conversation.started, conversation.ended and summary.ready with the decisions payload.',
  },
  'webhooks.delivery': {
    source: 'contract Events rule 1',
    behavior: 'Only enabled endpoints subscribed to the event type of the same account receive it.',
  },
  'webhooks.rotation': {
    source: 'decisions Webhook signature',
    behavior: 'For 24 h after rotate-secret each delivery carries one v1= per active secret, new first.',
  },
  'webhooks.test-ping': {
    source: 'contract Events rule 4',
    behavior: 'POST …/test sends a synchronous signed ping and reports the receiver status and latency.',
  },
  'limits.webhook-tests': {
    source: 'decisions Default quotas',
    behavior: 'Test pings count against webhook_tests (50 a day); past it 429 quota_exceeded with Retry-After.',
  },
  'webhooks.deliveries-list': {
    source: 'contract Webhooks; decisions List pages',
    behavior:
      'GET /webhooks/deliveries filters by endpoint, event, status and since, with a signed keyset cursor, and shows every attempt.',
  },
  'webhooks.tenancy': {
    source: 'contract Account resolution',
    behavior: "Another account's webhook endpoint or delivery answers 404.",
  },
  'webhooks.at-least-once': {
    source: 'decisions Events; issue 7',
    behavior:
      'An event survives a SIGKILL between its commit and its delivery and reaches the receiver after a restart (same event id).',
  },
  'webhooks.docs': {
    source: 'issue 7',
    behavior: 'The Webhooks docs page explains the headers and shows a receiver that verifies the signature.',
  },
  'mcp.connector': {
    source: 'contract Assistant connector',
    behavior: 'POST /mcp serves MCP statelessly with JSON responses; GET answers 405.',
  },
  'mcp.auth': {
    source: 'decisions MCP and OAuth paths; mcp-oauth-notes §1.2',
    behavior:
      '/mcp authenticates like REST (resolvers, ip_allowlist, failed-auth limit); no or bad token is 401 with WWW-Authenticate Bearer resource_metadata and scope (error="invalid_token" for a bad one); the master key is refused; a scope a personal key lacks is a tool error, and tools/list hides those tools (an OAuth token steps up instead: mcp.step-up).',
  },
  'mcp.tools': {
    source: 'issue 8 MCP connector',
    behavior:
      'Each tool is one REST operation called in-process with the caller credential: input schema from the route schemas, REST data as structuredContent, REST errors as isError results with code and field, the same audit row.',
  },
  'mcp.tenancy': {
    source: 'contract Tenant isolation',
    behavior: "Another tenant's agent through an MCP tool is a 404 not-found tool error.",
  },
  'mcp.cimd.metadata': {
    source: 'decisions MCP, current revision; issue 34',
    behavior:
      'The authorization server metadata advertises client_id_metadata_document_supported: true and none among token_endpoint_auth_methods_supported; registration (DCR) stays.',
  },
  'mcp.cimd.flow': {
    source: 'decisions MCP, current revision; issue 34',
    behavior:
      "An https URL client_id is a Client ID Metadata Document: the SDK client authorizes with it (PKCE), consent shows the document's client_name (escaped) and host, the token works on /mcp tools, and refresh and revocation identify the client by its URL.",
  },
  'mcp.cimd.mismatch': {
    source: 'decisions MCP, current revision; issue 34',
    behavior:
      "A document whose client_id is not its URL, whose redirect_uris lack the request's, that asks for a secret-based method, carries a secret, is not JSON or cannot be fetched is invalid_client on a page, never a redirect.",
  },
  'mcp.cimd.private-host': {
    source: 'decisions MCP, current revision; Security rules (SSRF); issue 34',
    behavior:
      'A document is fetched through the crawl SSRF guard: on a private host only when SVC_ALLOW_PRIVATE_HOSTS lists it, never through a redirect to a private host, http only on an allowed host; URLs without a path, with a fragment, credentials or dot segments are refused.',
  },
  'mcp.cimd.bounds': {
    source: 'decisions MCP, current revision; issue 34',
    behavior:
      'A document over 5 KB or not delivered within 5 s is invalid_client; fetches (not cache hits) are limited per client IP (client_document); a document is reused for its Cache-Control max-age (at most 24 h) and fetched again after it.',
  },
  'oauth.server': {
    source: 'decisions OAuth client rules',
    behavior: 'DCR, authorization code with PKCE S256, rotating refresh tokens, revocation.',
  },
  'oauth.discovery': {
    source: 'decisions MCP and OAuth paths',
    behavior:
      'RFC 8414 metadata and RFC 9728 protected-resource metadata (root, /mcp, /v1/mcp); the issuer is the public origin string, byte-identical to authorization_servers[0] and to iss; /.well-known/openid-configuration is 404.',
  },
  'oauth.access-token': {
    source: 'contract Credential types (svc_at_)',
    behavior:
      'An svc_at_ token authenticates exactly as its connection key (scopes, home account, audit row); past its hour it is 401 expired_token; revoked key, revoked grant or disconnection is 401 invalid_credentials.',
  },
  'oauth.connection': {
    source: 'decisions OAuth connection; Dashboard origin',
    behavior:
      'Consent (dashboard session) mints a personal key with the approved scopes and the home account; the dashboard lists connections and disconnecting kills every token and the key at once.',
  },
  'oauth.cors': {
    source: 'decisions MCP and OAuth paths; mcp-oauth-notes §8',
    behavior:
      'Preflights and exposed WWW-Authenticate/Mcp-* headers on discovery, OAuth and /mcp paths; REST /v1 stays closed to other origins; a foreign Origin on /mcp is 403.',
  },
  // Issue 12 (pipeline)
  'idempotency.secret-answers': {
    source: 'issue 12 item 5; decisions Security rules',
    behavior:
      'An Idempotency-Key answer that carries a secret (new and rotated keys, webhook endpoint create and rotate-secret, login links) is stored only AES-256-GCM encrypted, bound to the credential and key, and replayed only to that credential.',
  },
  'idempotency.account-scope': {
    source: 'issue 12 item 10',
    behavior:
      'The Idempotency-Key scope includes the resolved account: the master key acting for account A and then B with the same key and body gets two independent answers.',
  },
  'client-ip.trusted-proxies': {
    source: 'decisions Client IP',
    behavior:
      'X-Forwarded-For (first hop) and X-Forwarded-Proto are honoured only from a peer in SVC_TRUSTED_PROXIES (default loopback); from any other peer the socket address is the client IP for ip_allowlist, the failed-auth limit and the audit row.',
  },
  'http.json-content-type': {
    source: 'issue 12 item 10',
    behavior:
      'A non-empty request body must be sent as application/json (or +json; multipart where a route takes it); without a Content-Type it is 415 unsupported_media_type.',
  },
  'http.security-headers': {
    source: 'issue 12 item 10',
    behavior:
      'Every response, errors included, carries X-Content-Type-Options: nosniff; Strict-Transport-Security when served over https; the HTML docs page a strict script-free Content-Security-Policy.',
  },
  'filters.unknown-enum': {
    source: 'contract error table (unsupported_filter)',
    behavior:
      'An unknown enum value in a list query parameter (filter, sort, format, group_by) is 400 unsupported_filter naming the parameter; a bad query boolean stays validation_error.',
  },
  // Issue 12 (convs)
  'conversations.identity-keys': {
    source: 'contract Conversation identity; issue 12 item 12',
    behavior:
      "A conversation's identity always carries email, phone_e164, partner_agent_id and email_source (null when unknown) beside its other keys, in every read, answer and event.",
  },
  'conversations.deleted-writes': {
    source: 'decisions Soft delete; issue 12 item 15',
    behavior:
      "Messages, end and identify on a soft-deleted conversation answer 410 conversation_deleted; another account's deleted conversation stays 404.",
  },
  'conversations.list-to-backfill': {
    source: 'contract GET /conversations rule 2; issue 12 item 10',
    behavior:
      'A to without from (an open lower bound on started_at) is deep history: it needs conversations:backfill (403 insufficient_scope, field to) and is metered in the backfill class.',
  },
  // Issue 12 (uploads)
  'kb.upload-limits': {
    source: 'decisions Security rules (Limits on hostile work); issue 12 item 3',
    behavior:
      'Uploads are extracted in a worker thread (256 MB heap, 30 s): a DOCX/ZIP over 50 MB uncompressed or an entry over 100:1 is refused before inflating, an entry inflating past its declared size, a PDF over 500 pages or text over 2,000,000 characters fails the document with "The file could not be read within the limits: …"; the job finishes (no retry) and the server stays up.',
  },
  'platform.body-drain': {
    source: 'issue 12 item 14',
    behavior:
      'An answer given before the body is read (413, 401, …) is followed by draining the rest of the body (up to 64 MB or 30 s, then the connection is cut), so plain fetch with FormData sees the 413 instead of EPIPE.',
  },
  'platform.auth-before-body': {
    source: 'issue 12 item 10',
    behavior:
      'The body is read only when the handler asks for it, after authentication, scope and rate limit: a bad or missing key on a 9 MB upload is 401 without the server reading the body.',
  },
  // Issue 12 (identity)
  'security.suspension': {
    source: 'decisions Security rules, Suspension',
    behavior:
      'A suspended user or account is refused with 403 account_suspended through its personal keys, dashboard sessions, OAuth access tokens and /mcp, immediately; resuming restores access immediately; the master key is never suspended.',
  },
  'security.login-link-issuer': {
    source: 'decisions Login links; OAuth default scopes',
    behavior:
      'POST /users/{usr}/login-links: the master key for any user; a partners:manage key never for its own user and only for its partner members (none exist yet), else 403 forbidden_account; an OAuth principal never (403 insufficient_scope).',
  },
  'security.session-ceiling': {
    source: 'decisions Login links',
    behavior:
      'A session opened by a login link holds at most the scopes and ip_allowlist of the issuing credential: keys it creates or edits cannot exceed its scopes, inherit its ip_allowlist, and requests outside the allowlist are 403 ip_not_allowed.',
  },
  'security.key-allowlist-ceiling': {
    source: 'decisions Login links (ceiling); contract Credentials',
    behavior:
      "A key or session confined by an ip_allowlist cannot issue a key usable from elsewhere: with no ip_allowlist asked the new key inherits the issuer's; an entry outside it is 400 validation_error field ip_allowlist.",
  },
  'security.dashboard-audit': {
    source: 'decisions Login links (audit)',
    behavior:
      'Logins (password and link, failed or not), logouts and every /api/* session request write an audit row: credential_type session, credential_id ses_<16 hex>, the home account.',
  },
  'security.login-link-confirm': {
    source: 'issue 12 item 10',
    behavior:
      'GET of a login link url answers an HTML confirm page (no-store, Referrer-Policy no-referrer, never framed) whose form POSTs the token; the GET never spends the link, only the POST does.',
  },
  'security.scrypt-params': {
    source: 'issue 12 item 10',
    behavior:
      'Passwords are hashed with scrypt N=2^17, r=8, p=1, parameters stored in the hash; a hash with weaker parameters still logs in and is replaced by a current one on that login.',
  },
  // Issue 12 (oauth)
  'oauth.default-scopes': {
    source: 'decisions Security rules, OAuth default scopes',
    behavior:
      'An authorization request without a known scope is offered the read-only default (agents:read kb:read conversations:read summaries:read metrics:read); credentials:manage and partners:manage are never offered, advertised or granted to a connection (dropped when asked beside other scopes, invalid_scope when they are all that was asked).',
  },
  'oauth.no-credential-power': {
    source: 'decisions Security rules, OAuth default scopes',
    behavior:
      'An svc_at_ principal cannot issue, rotate or revoke API keys (403 insufficient_scope), even when its token and key hold credentials:manage.',
  },
  'oauth.disconnect-chain': {
    source: 'decisions Security rules, OAuth default scopes',
    behavior:
      'Disconnecting a connection revokes its key and every key rotated from it (the whole rotation chain): each is 401 afterwards.',
  },
  'oauth.login-csrf': {
    source: 'issue 12 item 10 (CSRF on /oauth/login)',
    behavior:
      'The authorize login form carries a token bound to the authorization request and to a browser cookie; a login POST without it or with a wrong one is 403 and signs nobody in. The consent form is bound to the session that displayed it.',
  },
  // Issue 12 (crawl)
  'kb.crawl.memory-bound': {
    source: 'decisions Security rules, Limits on hostile work; issue 12 item 4',
    behavior:
      'A site crawl reads at most 1 MiB and parses at most 5,000 tags per page, keeps 500 links and 200,000 characters of text per page, queues at most 10 × the page cap, and writes each page as it arrives: a site of 5 MB pages and 300,000 links crawls within a fixed memory bound.',
  },
  'kb.crawl.deadline': {
    source: 'decisions Security rules, Limits on hostile work; issue 12 item 4',
    behavior:
      'A whole crawl (knowledge base or build) ends after 10 minutes (SVC_CRAWL_DEADLINE_SECONDS) with the pages so far; the crawl row records why it stopped.',
  },
  'status.public-errors': {
    source: 'issue 12 item 10',
    behavior:
      'Build step errors, kb/status last_job.error and document and crawl errors show fixed public sentences, never internal text (gateway URLs, addresses, error codes, SQL); the detail goes to the server log.',
  },
  'limits.reindexes': {
    source: 'issue 12 item 10',
    behavior:
      'POST kb/reindex takes one unit of the daily reindexes quota (default 50; SVC_QUOTAS), 429 quota_exceeded with Retry-After past it, and is 402 payment_required when billing blocks, as are both build routes; GET limits lists reindexes.',
  },
  'kb.crawl.parallel-cap': {
    source: 'decisions Plan caps; issue 12 item 10',
    behavior:
      'Parallel site crawls of one agent admit each page under the agent row lock, so together they never exceed the plan page cap.',
  },
  // Issue 12 (webhooks)
  'webhooks.endpoint-cap': {
    source: 'decisions Security rules, Limits on hostile work',
    behavior:
      'At most 20 live webhook endpoints per account, counted under the account lock: the 21st create (also among concurrent creates) is 403 plan_limit_reached; deleted endpoints do not count.',
  },
  'webhooks.fair-delivery': {
    source: 'issue 12 item 8',
    behavior:
      "Each account gets a fair share of the delivery slots: one tenant's backlog to a receiver that never answers does not delay another tenant's delivery (arrives within 5 s).",
  },
  'webhooks.ping-stored': {
    source: 'issue 12 item 13',
    behavior:
      'A test ping is stored as a delivery (event_type ping) under the X-Svc-Delivery id it was sent with: listed, readable, replayable; never fanned out to other endpoints.',
  },
  // Issue 12 (regex)
  'security.hostile-input.nul': {
    source: 'guide Bad input gets a clear error; issue 14 review',
    behavior:
      'U+0000 in a body value or key, a query value or a path parameter is 400 validation_error naming the field (PostgreSQL stores no NUL), never a 500, and nothing is written.',
  },
  'security.hostile-input.patterns': {
    source: 'decisions Security rules (Hostile input); issue 12 item 1',
    behavior:
      'No request holds the process: lengths are checked before any pattern and no pattern has overlapping quantifiers, so 2 MB adversarial identity e-mails, refinement rules and prompts, chat messages and redacted reads answer within 1 s while GET /health answers within 1 s.',
  },
  'security.csv-formula': {
    source: 'decisions Security rules (Hostile input); issue 12 item 10',
    behavior:
      'The audit CSV export prefixes a single quote to a text cell that begins with =, +, -, @, tab or carriage return.',
  },
  // Issue 19 (hostile input: fuzz and OWASP API Top 10)
  'security.fuzz.no-5xx': {
    source: 'issue 19 item 4 (fuzz)',
    behavior:
      "Valid and boundary bodies generated from each write route's OpenAPI schema never answer a 5xx; every refusal is the error envelope.",
  },
  'security.fuzz.query': {
    source: 'issue 19 item 4 (fuzz); decisions Validation codes',
    behavior:
      'On every GET: an unknown query key is 400 unsupported_filter naming it; a value its schema refuses, or a non-repeatable key given twice, is a 400 naming the parameter; valid values and broken percent-encoding never answer a 5xx.',
  },
  'security.fuzz.invalid-bodies': {
    source: 'issue 19 item 4 (fuzz); decisions Hostile input (issue 19)',
    behavior:
      'On every write route: an unknown key is 400 unsupported_field naming it; one property broken against its schema is a 400 naming it (413 past 2 MB); bad JSON, bytes that are not UTF-8 and a key given twice in one object are 400 invalid_json; a lone surrogate is 400 validation_error naming the field; a non-object body or 65+ levels of nesting is 400 validation_error; a non-JSON type is 415.',
  },
  'security.fuzz.nothing-written': {
    source: 'issue 19 item 4 (fuzz)',
    behavior: 'After every invalid case of every write route, each resource of the tenant reads exactly as before.',
  },
  'security.owasp.bola': {
    source: 'issue 19 item 4 (OWASP API1)',
    behavior:
      "Every OpenAPI operation with an id path parameter answers 404 (never data) for another tenant's real id.",
  },
  'security.owasp.authentication': {
    source: 'issue 19 item 4 (OWASP API2)',
    behavior:
      'Every non-public operation answers 401 with the envelope to no credential, a malformed one and a revoked one.',
  },
  'security.owasp.property-level': {
    source: 'issue 19 item 4 (OWASP API3)',
    behavior:
      'Read-only properties (ids, account_id, status where not writable, balances, created_at) in a create or patch body are 400 unsupported_field and change nothing; responses never carry secrets other than the one-time secret of a create or rotate.',
  },
  'security.owasp.resource-consumption': {
    source: 'issue 19 item 4 (OWASP API4)',
    behavior:
      'Bodies past 2 MB are 413 while streaming; a page limit above the maximum is 400 invalid_limit on every list; archives and crawls are bounded (the other files of issue 12 prove those bounds).',
  },
  'security.owasp.function-level': {
    source: 'issue 19 item 4 (OWASP API5)',
    behavior:
      'Every master-only operation (Operator tag, /users, /audit, partners) refuses a tenant key holding every personal scope (403) and a missing key (401).',
  },
  'security.owasp.business-flows': {
    source: 'issue 19 item 4 (OWASP API6)',
    behavior:
      'Repeated failed logins and failed authentications are limited per client (429) before they can be brute-forced.',
  },
  'security.owasp.ssrf': {
    source: 'issue 19 item 4 (OWASP API7)',
    behavior:
      'Every URL the service fetches (builds, crawls, webhooks) refuses private, loopback, link-local and unspecified hosts however written (decimal, octal, hex, IPv6, IPv4-mapped, a name resolving to one) and redirects to them, with 400 invalid_url or a failed fetch, and no request reaches the private address.',
  },
  'security.owasp.misconfiguration': {
    source: 'issue 19 item 4 (OWASP API8)',
    behavior:
      'Every response carries the security headers and no-store; no CORS grant to an arbitrary Origin on the API; errors never echo stack traces or internal paths; TRACE and unknown methods are 405/404 with the envelope.',
  },
  'security.owasp.inventory': {
    source: 'issue 19 item 4 (OWASP API9)',
    behavior:
      'Every route the server answers is in the OpenAPI document and every documented operation answers (no 404 for a documented route); no undocumented route is served.',
  },
  'security.owasp.unsafe-consumption': {
    source: 'issue 19 item 4 (OWASP API10)',
    behavior:
      'Content the service fetches from third parties (crawled pages, webhook receivers) is bounded in size and never followed to a private address; a hostile page answers a clear failure, not a 5xx.',
  },
  // Issue 29 (every stored setting acts; decisions "Behaviour: every stored setting acts")
  'behaviour.business-hours': {
    source: 'decisions Behaviour: business_hours',
    behavior:
      "business_hours {mon…sun: [[HH:MM, HH:MM]…]} in the agent's timezone (null always open; another shape 400 validation_error naming the field): outside them a new conversation's greeting is after_hours_message, metrics.after_hours is true (else false), and transfer_call does not transfer (the agent says after_hours_message), on every surface.",
  },
  'behaviour.fallback': {
    source: 'decisions Behaviour: fallback_message',
    behavior:
      "When the agent cannot answer (engine failure or timeout, or nothing in the knowledge), the answer is fallback_message when set and unanswered is true; the summary's action_items name the unanswered question.",
  },
  'behaviour.small-talk': {
    source: 'decisions Behaviour: fallback_message',
    behavior:
      'Greetings, thanks and goodbye are answered in kind and never unanswered, with both engines and on every surface.',
  },
  'behaviour.escalation': {
    source: 'decisions Behaviour: Escalation',
    behavior:
      'A visitor asking for a person (chat, widget, voice chat) or a transfer_call that runs (phone) gives a handoff turn with escalation_message (else a default sentence), escalated true, summary.escalated_to_human {value: true, reason}, one conversation.escalated event, and outcome transferred (a call transferred) or escalated unless a stronger outcome was reached; outside business hours the escalation is recorded without a transfer.',
  },
  'behaviour.notification-emails': {
    source: 'decisions Behaviour: notification_emails',
    behavior:
      'Each escalation mails every address of notification_emails (subject names the agent; body: who, the last visitor turn, the conversation id); a capability whose own e-mail list is empty mails notification_emails instead.',
  },
  'behaviour.identity': {
    source: 'decisions Behaviour: Identity from the conversation',
    behavior:
      'An e-mail or phone number the visitor states, or a capability captures, fills an empty identity.email / identity.phone_e164 (email_source stated or capability; API-given identity keeps api), so has_identity and summary.lead agree with the transcript; collect_identity makes the first answer ask for a name and an e-mail or phone number while identity is empty.',
  },
  'behaviour.greetings': {
    source: 'decisions Behaviour: greetings',
    behavior:
      "A new conversation's greeting is greetings[surface][language], else its primary subtag, else greetings[surface][default_language], else the contract's order for the surface; the widget sends the browser's language.",
  },
  'behaviour.summary-language': {
    source: 'decisions Behaviour: summary_language',
    behavior:
      "The summary is written in summary_language when set, else the conversation's language; summary.language reports it.",
  },
  'behaviour.profile': {
    source: 'issue 29: every whitelisted setting has a runtime reader',
    behavior:
      "business_profile, conversation_style, languages (and voice_style on voice surfaces) are given to the engine in every turn's prompt; a visitor language outside languages keeps the conversation's language.",
  },
  'behaviour.model-voice': {
    source: 'issue 29: every whitelisted setting has a runtime reader',
    behavior:
      "temperature, max_response_tokens and use_large_model reach the chat engine's request; voice_id and speaking_rate the speech synthesis of a call; voice_locale (else default_language) the language of a call's transcription.",
  },
  // issue 30 — small rules
  'abuse.small.partner-suspended-member': {
    source: 'issue 30 Low 3; decisions Security rules "Small rules"',
    behavior:
      "A partner key is refused with 403 account_suspended on a suspended member's account, whichever way the request names it (/accounts/{acc}/…, /users/{usr}/…, X-Svc-Account, account_id), reads and writes alike; its own account and its other members stay reachable, GET /partners/members/{usr} still reads the member (status suspended), and resuming the member lets the key in again at once.",
  },
  'abuse.small.widget-demo-off': {
    source: 'issue 30 Low 4; decisions Security rules "Small rules"',
    behavior:
      'Without SVC_WIDGET_DEMO=1, GET /widget-demo answers 404 not_found like an unknown path, whatever the agent id.',
  },
  'abuse.small.listen-loopback': {
    source: 'issue 30 Low 4; decisions Security rules "Small rules"',
    behavior:
      'A plain node .output/server/index.mjs with neither HOST nor NITRO_HOST set listens on 127.0.0.1 only (a connection to another interface of the machine is refused); HOST or NITRO_HOST, when set, is where it listens.',
  },
  'abuse.small.failure-reason-public': {
    source: 'issue 30 Low 5; decisions Security rules "Small rules"',
    behavior:
      "When the telephony provider refuses to place a call (an HTTP error answer) or cannot be reached, the call ends failed with a failure_reason that is a public sentence naming no provider account SID, URL or credential; the provider's detail goes to the server log, without the auth token.",
  },
  'abuse.small.speech-rate': {
    source: 'issue 30 Low 7; decisions Security rules "Heavy work off the event loop"',
    behavior:
      "A speech provider's audio at a sample rate outside 8–48 kHz (a WAV header saying 1 Hz, or 96 kHz) is refused before it is resampled: the synthesis fails with an error naming the rate, like any provider error; 8 and 48 kHz are accepted.",
  },
  'abuse.small.rate-limit-names': {
    source: 'issue 30 Low 8; decisions Security rules "Small rules"',
    behavior:
      'SVC_RATE_LIMITS takes the widget limiters (widget_ip, widget_token) and the OAuth ones (register, token, revoke) beside the API classes, and they act; any other name stops the boot. PATCH /admin/config rate_limits takes the same names (GET shows their figures), still 400 unsupported_field for an unknown one; GET /accounts/{acc}/limits lists the API classes only.',
  },
  // issue 30 — real telephony provider
  'abuse.telephony.trial-calls': {
    source: 'decisions Security rules: Calls cost money',
    behavior:
      'With a real telephony provider a trial account cannot place calls: POST /calls and a campaign start answer 403 plan_limit_reached and nothing is dialled; a paid plan calls, and the simulated network stays free for every plan (a trial call is placed there).',
  },
  'abuse.telephony.trial-transfer': {
    source: 'decisions Security rules: Calls cost money',
    behavior:
      "With a real telephony provider a trial account's transfer_call fails: the tool result says why and no leg is dialled at the provider.",
  },
  'abuse.telephony.transfer-leg': {
    source: 'decisions Security rules: Calls cost money',
    behavior:
      "A transfer leg ends at the agent's max_call_duration_s (Twilio <Dial timeLimit>) and its talk time, reported by the provider, is billed per minute like a call (usage voice seconds and cost), once.",
  },
  'abuse.telephony.numbers-owned': {
    source: 'decisions Security rules: Numbers',
    behavior:
      'With a real telephony provider POST /phone-numbers routes only a number the provider account owns (Twilio IncomingPhoneNumbers lookup), else 400 number_not_owned; a failed lookup routes nothing; the simulated network owns every number.',
  },
  // issue 30 — voice sessions and widget abuse
  'abuse.voice.clock-without-marks': {
    source: 'decisions Security rules: Voice sessions end',
    behavior:
      "A browser voice chat whose client never echoes marks, with recording off, still ends by silence_timeout_s on the session's own clock, and is billed no more than its duration.",
  },
  'abuse.voice.chat-ceiling': {
    source: 'decisions Security rules: Voice sessions end',
    behavior:
      'A voice chat ends after VOICE_CHAT_MAX_SECONDS (10 minutes; lowered by the test-only SVC_VOICE_CHAT_MAX_SECONDS) in all on the wall clock, end reason max_duration, whether the client streams audio or sends none.',
  },
  'abuse.voice.unstarted-sockets': {
    source: 'decisions Security rules: Voice sessions end (Low 1)',
    behavior:
      'A media socket (Twilio media stream, /v1/widget/voice) that has not started a stream within 2 s is closed (1008); one client (an IPv6 client by its /64) may hold at most 20 unstarted sockets, the next upgrade is 429 rate_limited.',
  },
  'abuse.voice.account-cap': {
    source: 'decisions Security rules: Voice sessions end',
    behavior:
      'One account holds at most 20 simultaneous voice chats: the next socket is closed with 1013 and opens no conversation; once one ends a new one opens.',
  },
  'abuse.widget.conversations-per-day': {
    source: 'decisions Security rules: Widget abuse (Medium 5)',
    behavior:
      'New widget conversations per agent per UTC day are capped by widget_conversations_per_day (default 2,000; GET/PATCH /admin/config, null restores): past it 429 quota_exceeded with Retry-After, other agents unaffected.',
  },
  'abuse.widget.voice-minutes': {
    source: 'decisions Security rules: Widget abuse (Medium 5)',
    behavior:
      "Voice-chat minutes per agent per UTC day are capped by voice_chat_minutes_per_day (default 600; GET/PATCH /admin/config): a chat reserves its seconds when it opens, the upgrade past the cap is 429 quota_exceeded, and a chat's unused seconds come back when it ends.",
  },
  'abuse.widget.ipv6-per-ip': {
    source: 'decisions Security rules: Widget abuse (Medium 5)',
    behavior:
      'Per-IP limits count an IPv6 client by its /64: addresses of one /64 share the widget_ip budget, another /64 has its own.',
  },
  // issue 30 — dial-time checks and quotas
  'abuse.dial.premium-calls': {
    source: 'decisions Security rules "Calls cost money"; issue 30 High 2',
    behavior:
      'POST /calls refuses premium-rate, shared-cost, personal, pager, UAN and voicemail-access numbers (libphonenumber type, full metadata) with 400 invalid_phone on `to`, the message naming why.',
  },
  'abuse.dial.premium-transfer': {
    source: 'decisions Security rules "Calls cost money"; issue 30 High 2',
    behavior:
      'An agent transfer_directory entry whose phone is such a number is 400 invalid_phone on capability_settings.transfer_directory.<i>.phone; transfer_call refuses it again when it runs.',
  },
  'abuse.dial.campaign-premium': {
    source: 'decisions Security rules "Calls cost money"; issue 30 High 2',
    behavior:
      'A campaign contact with such a number is skipped at dial time (not refused at import): the contact ends failed with outcome invalid_phone and is never called.',
  },
  'abuse.dial.call-countries': {
    source: 'decisions Security rules "Calls cost money"; issue 30 High 2',
    behavior:
      'The operator config key call_countries (GET/PATCH /admin/config; ISO 3166 alpha-2 codes, validated, upper-cased, null for every country) refuses calls, transfer entries and campaign contacts outside those countries with invalid_phone.',
  },
  'abuse.dial.partner-members': {
    source: 'decisions Security rules "Calls cost money"; issue 30 High 2',
    behavior:
      'A partner creates at most 50 members per UTC day; the 51st POST /partners/members is 429 quota_exceeded with Retry-After.',
  },
  'abuse.dial.queued-recheck': {
    source: 'decisions Security rules "Checks at dial time"; issue 30 Medium 2',
    behavior:
      'A queued call is checked again when a line frees: a number put on the do-not-call list since, a paused agent or an unpaid account (402 check; a suspended one alike) ends it canceled, undialled, its failure_reason a public sentence naming why.',
  },
  'abuse.dial.suspended-campaign': {
    source: 'decisions Security rules "Checks at dial time"; issue 30 Medium 1',
    behavior:
      'After the account is suspended its running campaign dials nothing more (the call in progress ends; the campaign stays running with contacts pending).',
  },
  'abuse.dial.inbound-daily': {
    source: 'decisions Security rules "Inbound quotas"; issue 30 Medium 3',
    behavior:
      'Inbound calls count against inbound_calls_per_day (default 500; PATCH /users limits) and never against max_calls_per_day; over it a call is refused and recorded failed (quota_exceeded); GET /accounts/{acc}/limits shows inbound_calls_per_day, inbound_calls_today and inbound_calls_per_caller_per_hour.',
  },
  'abuse.dial.inbound-per-caller': {
    source: 'decisions Security rules "Inbound quotas"; issue 30 Medium 3',
    behavior:
      'One caller number opens at most 10 inbound calls an hour per account; the 11th hears a refusal and is a failed conversation with failure_reason caller_rate_limited; other callers are not held back.',
  },
  'abuse.dial.sweep-fair': {
    source: 'issue 30 Low 6',
    behavior:
      'The minute sweep serves at most a batch of running campaigns per pass, resuming after the last one served, so a campaign beyond the first window is dialled (batch lowered by the test-only SVC_CAMPAIGN_SWEEP_BATCH).',
  },
  // issue 30 — heavy work
  'abuse.import.health-responsive': {
    source: 'issue 30 Medium 6; decisions Security rules (Heavy work off the event loop)',
    behavior:
      'A CSV import of about 10 MB (50,000 rows) is parsed in bounded chunks that yield to the event loop, so GET /v1/health answers within 1 s while it runs.',
  },
  'abuse.import.row-cap': {
    source: 'issue 30 Medium 6; decisions Security rules (Heavy work off the event loop)',
    behavior:
      'An import of more than 50,000 rows (CSV rows or JSON contacts) is 403 plan_limit_reached and imports nothing.',
  },
  'abuse.import.multipart-bounded': {
    source: 'issue 30 Medium 6; decisions Abuse and cost (Multipart parsing)',
    behavior:
      'A multipart body is read by a bulk parser (not byte by byte on the event loop) and holds at most 100 parts: 101 is 400 validation_error and nothing is imported.',
  },
  'abuse.import.list-cap': {
    source: 'issue 30 Medium 6; decisions Security rules (Heavy work off the event loop)',
    behavior:
      'A contact list holds at most 200,000 items: an import into a full list, or one that would take it past the cap, is 403 plan_limit_reached and imports nothing (cap lowered by the test-only SVC_CONTACT_LIST_MAX_ITEMS).',
  },
  // issue 30 — the gaps closed after the first pass
  'abuse.gaps.queued-suspended': {
    source: 'decisions Security rules "Checks at dial time"; issue 30 Medium 2',
    behavior:
      'With a real telephony provider, a call queued before its account was suspended is never dialled when a line frees: it ends canceled (started_at null) with a failure_reason naming the suspension, and the provider is never asked to place it.',
  },
  'abuse.gaps.queued-trial': {
    source: 'decisions Security rules "Calls cost money", "Checks at dial time"',
    behavior:
      'With a real telephony provider, a call queued before its account was moved to the trial plan is never dialled when a line frees: it ends canceled with a failure_reason naming the trial, and the provider is never asked to place it.',
  },
  'abuse.gaps.campaign-unpaid': {
    source: 'decisions Security rules "Checks at dial time"; issue 30 Medium 1',
    behavior:
      'A running campaign of an account that can no longer pay (the 402 check: no allowance, an empty wallet) places no new call at the provider when its lines free; it stays running with contacts pending.',
  },
  'abuse.gaps.campaign-trial': {
    source: 'decisions Security rules "Calls cost money", "Checks at dial time"',
    behavior:
      'With a real telephony provider, a running campaign of an account moved to the trial plan places no new call when its lines free; it stays running with contacts pending.',
  },
  'abuse.gaps.transfer-refused': {
    source: 'decisions Security rules "Calls cost money"; issue 30 High 2',
    behavior:
      'With a real telephony provider, a transfer_call whose directory number the dial rules now refuse (outside call_countries, set after the directory was saved) answers ok: false saying the person cannot be reached, and no leg is placed at the provider (the call is not transferred); once the number is allowed again the same transfer is placed.',
  },
  'abuse.gaps.lookup-unavailable': {
    source: 'decisions Security rules "Numbers"; Abuse and cost (issue 30) "Owned numbers"',
    behavior:
      'POST /phone-numbers whose ownership lookup fails (the provider answers 5xx or cannot be reached) is 502 provider_unavailable (in the OpenAPI responses of the route), its message naming no provider URL, account or answer; nothing is routed, and a retry once the provider answers routes the number.',
  },
  'abuse.dial.suspend-mid-campaign-chaos': {
    source: 'issue 30 "must show": the chaos and load runs with campaigns and suspensions mixed in',
    engines: ['postgres'],
    behavior:
      "In the chaos run (two instances, SIGKILLs) a tenant is suspended with the master key in the middle of its running campaign while the rest of the load goes on: no call of it reaches the telephony provider after the suspension's 200 arrived unless its dial round had passed the account check before (started_at before the answer), the campaign stays running with contacts pending, the tenant's own requests meanwhile are refused 403 account_suspended (no failure), and after its resume every other check holds for it too.",
  },
  // issue 30 Medium 7 — MP3 encoding of recordings off the event loop
  'abuse.heavy.mp3-event-loop': {
    source: 'decisions Security rules: Heavy work off the event loop; issue 30 Medium 7',
    behavior:
      'Recordings are MP3-encoded in a pool of SVC_MP3_WORKERS encoder threads, not on the event loop: while 80 recorded voice chats stream at once (more audio than one core encodes), GET /v1/health answers within 1 s.',
  },
  'abuse.heavy.mp3-plays': {
    source: 'decisions Security rules: Heavy work off the event loop; issue 30 Medium 7',
    behavior:
      "A recording encoded by the pool decodes (mpg123) without errors to the recording's duration_s, which is the call's duration; the caller is on the left channel and the agent on the right.",
  },
  'abuse.heavy.mp3-backlog-cap': {
    source: 'decisions "Abuse and cost (issue 30)": MP3 encoding; issue 30 Medium 7',
    behavior:
      'The call audio waiting for the encoder threads is capped across all recordings (SVC_MP3_BACKLOG_MB, default 64): the recording whose chunk would pass the cap stops there and is kept as a shorter, playable file, with a log line; the call goes on normally.',
  },
  'abuse.heavy.mp3-worker-crash': {
    source: 'decisions "Abuse and cost (issue 30)": MP3 encoding; issue 30 Medium 7',
    behavior:
      'An encoder thread that dies (test-only SVC_MP3_WORKER_CRASH_AFTER) does not take the call down: it completes, its recording keeps what was encoded, log lines say so, and a replacement thread records the next call whole.',
  },
  'abuse.heavy.mp3-shutdown': {
    source: 'decisions "Abuse and cost (issue 30)": MP3 encoding; issue 30 Medium 7',
    behavior:
      "SIGTERM with a recorded call live: the server stops its encoder threads (unref'd, terminated in the stop) and exits 0.",
  },
  'behaviour.website-url': {
    source: 'issue 29: every whitelisted setting has a runtime reader',
    behavior:
      "website_url is the site a rebuild (POST /agents/{agt}/build) crawls: after a change, the rebuild's outputs come from the new site.",
  },
  'behaviour.greeting-order': {
    source: 'contract greeting order; issue 29',
    behavior:
      'Without a greetings entry the greeting is greeting_initial (filled with business_name), then public_chat_greeting (first on the widget), then greeting; greetings fall back to default_language.',
  },
  'behaviour.idle-abandoned': {
    source: 'decisions Behaviour: Idle conversations',
    behavior:
      'An in_progress api or widget conversation with no new turn for conversation_idle_seconds (default 1800; SVC_CONVERSATION_IDLE_SECONDS; GET/PATCH /admin/config, minimum 10) becomes abandoned within 30 s: ended_at its last turn, conversation.ended, a summary, outcome abandoned unless a stronger one was reached.',
  },
  'behaviour.redaction': {
    source: 'decisions Behaviour: Redaction',
    behavior:
      "Every read returning transcript, summary or identity (detail, list with include, GET …/summary, event payloads) masks PII by the redact query or else the account's default_redaction.",
  },
  'behaviour.utm': {
    source: 'decisions Behaviour: utm; contract (nested objects always objects)',
    behavior:
      'Every conversation carries utm {source, medium, campaign, term, content} (strings of at most 200 or null, always an object); POST /conversations and POST /v1/widget/conversations accept it and /widget.js sends the host page utm_* parameters.',
  },
  'behaviour.account-resolution': {
    source: 'decisions Behaviour: Account resolution',
    behavior:
      "The contract's account order (account_id query, account_id in a POST body, X-Svc-Account, the home account) holds on every account-scoped route, outbound routes included.",
  },
  'auth.password-reset': {
    source: 'decisions Behaviour: Password reset',
    behavior:
      'POST /api/auth/password-reset {email} answers 202 whatever the address (rate-limited per IP and per address) and mails a single-use link valid 30 minutes; POST /api/auth/password-reset/confirm {token, password ≥ 12} answers 204 and ends every dashboard session of the user; a used or expired token is 400 invalid_token; PATCH /users/{usr} accepts password (master, or a partner for its members).',
  },
  'behaviour.voicemail-policy': {
    source: 'decisions Behaviour: Voicemail; contract unsupported_policy',
    behavior:
      'The only voicemail policy is hang_up (the default) on calls, campaigns and profiles; any other value is 400 unsupported_policy; an answering machine ends the call at once with outcome voicemail; profiles have no voicemail_message.',
  },
  'contract.smaller-points': {
    source: 'decisions Behaviour: Smaller contract points',
    behavior:
      "Imported conversations have channel import; agents:admin restores a prompt version and regenerates the widget token; dated lists' meta carry from, to and applied_default_range; PATCH widget does not return public_token; widget POSTs accept Idempotency-Key; recordings count in the audio rate class; timestamp input ends in Z; every list answers the list envelope (/admin/migrations included); a partner key's account_ids list its members' accounts.",
  },
  // Issue 28 (real-time voice)
  'voice.streaming': {
    source: 'decisions Real-time voice; issue 28 items 1–2',
    behavior:
      'The chat engine streams (openai: stream true) and the session sends the first sentence to speech synthesis while the engine is still writing; audio frames go to the leg as synthesis yields them, one mark per answer.',
  },
  'voice.barge-in-heard': {
    source: 'decisions Real-time voice; issue 28 item 2',
    behavior:
      'Barge-in during an answer aborts the engine, every synthesis in flight and playback (clear); the stored answer holds only the words that played (an interrupted sentence cut in proportion to its played audio) and its audio_duration_ms is what played.',
  },
  'voice.pause-one-turn': {
    source: 'decisions Real-time voice (end_of_speech_ms, speculative transcription); issue 28 item 3',
    behavior:
      'A caller who pauses for less than end_of_speech_ms and goes on is answered once, after the whole sentence; speech that resumes before any of an answer was sent drops that answer and joins the next turn.',
  },
  'voice.tool-in-stream': {
    source: 'issue 28 item 2',
    behavior:
      'A tool call inside a streamed voice answer runs in the same turn (tool turn recorded) and the answer built from its result is spoken.',
  },
  'voice.engine-fails': {
    source: 'issue 28 item 2; decisions fallback_message',
    behavior:
      "An engine failing in the middle of a streamed voice answer: the caller hears what was already said, then the agent's fallback_message (else the host's apology); the turn is stored once, unanswered.",
  },
  'voice.latency-breakdown': {
    source: 'decisions Turn latency; issue 28 item 5',
    behavior:
      'Voice answer turns (phone and voice chat) carry latency_ms (end of speech → first audio frame) and latency_breakdown {endpoint_ms, stt_ms, llm_first_token_ms, tts_first_byte_ms}; every other turn has latency_breakdown null.',
  },
  'voice.end-of-speech': {
    source: 'decisions Real-time voice; issue 28 item 3',
    behavior:
      "end_of_speech_ms (200–2,000, default 500; PATCH /agents and PATCH /agents/{agt}/voice, a voice change that bumps agent_version) is the silence that ends the caller's turn on calls and voice chats.",
  },
  'voice.deepgram': {
    source: 'decisions Streaming speech provider; issue 28 item 4',
    behavior:
      'SVC_STT/SVC_TTS choose each direction (default SVC_SPEECH); the deepgram provider transcribes live over its WebSocket (interim results, endpointing, utterance end, Finalize) and a call runs end to end with it.',
  },
  // Issue 15 (inbound phone and the voice runtime)
  'calls.inbound-simulated': {
    source: 'decisions Run surfaces (Simulated inbound call, Phone conversations); issue 15',
    behavior:
      'POST /simulator/inbound-calls answers 202 {conversation_id conv_u…, in_progress}; the call runs through speech, the phone prompt and the calls knowledge, completes by itself with duration_s, a summary, and its voice seconds and cost in usage.',
  },
  'calls.audio-offsets': {
    source: 'decisions Run surfaces (Phone conversations)',
    behavior:
      'Every spoken turn of a call carries integer audio_offset_ms and audio_duration_ms on the call clock, in order; confidence stays null.',
  },
  'calls.recording': {
    source: 'decisions Run surfaces (Phone conversations); contract GET /media/recordings/{sid}.mp3',
    behavior:
      'With record_calls a call leaves a recording: GET /conversations/{conv}/recording signs a URL that serves audio/mpeg (MP3) with byte ranges; a forged token is 400 invalid_token; another tenant gets 404.',
  },
  'calls.inbound-history': {
    source: 'contract Runtime knowledge rule 4; issue 15',
    behavior:
      "An inbound call's agent receives date, outcome and summary of the caller's last three calls within 30 days (earlier inbound calls included), never the transcript; another caller's call does not.",
  },
  'calls.simulator-errors': {
    source: 'decisions Run surfaces (Phone numbers, Simulated inbound call)',
    behavior:
      "A simulated call to another tenant's number is 404; non-E.164 numbers are 400 invalid_phone naming the field; a number without an agent is answered, refused and recorded as a failed conversation.",
  },
  'calls.session-rules': {
    source: 'issue 15 item 3',
    behavior:
      'The voice session honours silence_timeout_s, max_call_duration_s and end_call_phrases, puts an opting-out caller on the do-not-call list (source opt_out) and hands a transfer_call to the telephony provider (outcome transferred).',
  },
  'calls.quotas': {
    source: 'contract Limits (max_calls_per_day, max_concurrent_calls); issue 15 item 3',
    behavior:
      'Every inbound call counts against max_concurrent_calls and its daily quota (inbound_calls_per_day since issue 30; max_calls_per_day is outbound only); a call over either is refused with a spoken message and recorded as a failed conversation (metrics.failure_reason).',
  },
  'calls.twilio': {
    source: 'decisions Run surfaces (Telephony providers); issue 15 item 4',
    behavior:
      'The twilio provider answers a signed inbound webhook with <Connect><Stream>, carries the call over a bidirectional Media Streams WebSocket (8 kHz μ-law, mark, clear on barge-in, stop), transfers with <Dial> and hangs up through the REST Calls API; only media-stream paths accept a WebSocket upgrade.',
  },
  'calls.twilio-signature': {
    source: 'decisions Run surfaces (Telephony providers)',
    behavior:
      'Provider webhooks are authenticated by X-Twilio-Signature (the official validator) over the exact public URL: a wrong, missing or moved signature is 403, no API key is asked for, and they are not audited nor in the OpenAPI document.',
  },
  // Phone numbers (decisions Run surfaces, row Phone numbers)
  'phone-numbers.crud': {
    source: 'decisions Run surfaces (Phone numbers)',
    behavior:
      'POST /phone-numbers {e164, agent_id?, label?} answers 201 num_<n> {number_id, account_id, e164, provider (the configured telephony provider), agent_id, label, created_at, updated_at}, every key present; GET, PATCH (label; null clears) and DELETE (204, then 404) on /phone-numbers/{num}; unknown body keys are 400 unsupported_field, an empty patch 400 empty_update.',
  },
  'phone-numbers.list': {
    source: 'decisions Run surfaces (Phone numbers); contract Lists',
    behavior:
      "GET /phone-numbers lists the account's numbers newest first in keyset pages, filtered by agent_id (malformed: 400 invalid_id); the cursor is bound to the filter set and limit (else 400 invalid_cursor).",
  },
  'phone-numbers.e164': {
    source: 'decisions Run surfaces (Phone numbers)',
    behavior:
      'e164 must be a string in international form (a leading +) that is a valid number for its country; it is stored in canonical E.164 form. National forms, garbage, numbers too long, extensions and non-strings are 400 invalid_phone (field e164).',
  },
  'phone-numbers.taken': {
    source: 'decisions Run surfaces (Phone numbers)',
    behavior:
      'A number already held by any account is 409 number_taken (field e164), also when several accounts create it at once: exactly one create wins.',
  },
  'phone-numbers.agent': {
    source: 'decisions Run surfaces (Phone numbers)',
    behavior:
      "agent_id on create or patch must name an agent of the same account (another account's or an unknown agent: 404 agent_not_found, as on POST /conversations); PATCH agent_id null unassigns.",
  },
  'phone-numbers.isolation': {
    source: 'decisions Run surfaces (Phone numbers); contract Account resolution',
    behavior:
      "Another account's number answers 404 not_found on read, patch and delete and is left intact; a multi-account key acts for the account named by account_id or X-Svc-Account.",
  },
  'phone-numbers.scopes': {
    source: 'decisions Run surfaces (Phone numbers)',
    behavior: 'Reads need agents:read and writes agents:write (else 403 insufficient_scope).',
  },
  'phone-numbers.lookup': {
    source: 'decisions Run surfaces (Phone numbers): inbound calls',
    behavior:
      'findNumberByE164 finds a number by its E.164 form across every account (the inbound path knows only the dialled number), with its account, agent and provider; null for a number no account holds.',
  },
  'outbound.dnc': {
    source: 'decisions Run surfaces (Do-not-call)',
    behavior:
      'POST /dnc {phone, reason?} answers 201 with {dnc_id, account_id, phone_e164, reason, source: api, created_at}, or 200 with the existing entry for a number already listed (written any way); GET /dnc lists newest first with a keyset cursor bound to the phone filter; DELETE /dnc/{dnc} answers 204; a phone that is not international E.164 is 400 invalid_phone (field phone).',
  },
  'outbound.dnc-isolation': {
    source: 'decisions Run surfaces (Do-not-call); contract Account resolution',
    behavior:
      "Another account's entry is 404 not_found on delete and absent from lists; a number is listed per account; a multi-account key acts for the account named by account_id or X-Svc-Account.",
  },
  'outbound.dnc-scopes': {
    source: 'decisions Run surfaces (Do-not-call); Scopes beyond those named',
    behavior: 'GET /dnc needs outbound:read, POST and DELETE need outbound:write (else 403 insufficient_scope).',
  },
  'outbound.lists': {
    source: 'decisions Run surfaces (Contact lists)',
    behavior:
      "GET/POST /agents/{agt}/lists (outbound:read / outbound:write) create and list {list_id, agent_id, name, default_region, item_count, created_at, updated_at} newest first with a keyset cursor; default_region is an ISO 3166 alpha-2 code; GET /lists/{lst}/items pages items {item_id, phone_e164, name, timezone, variables, dnc, created_at}; another account's agent is 404 agent_not_found, its list 404 not_found.",
  },
  'outbound.lists-import': {
    source: 'decisions Run surfaces (Contact lists)',
    behavior:
      "POST /lists/{lst}/import takes CSV (multipart part file; BOM, quoted commas and newlines; header phone required, name, timezone, other columns as variables) or JSON {contacts}; numbers international or national in the list's default_region; answers {imported, duplicates, invalid: [{line, reason}], list}; dedupes within the import and against the list; do-not-call numbers kept and flagged dnc: true; bad rows (number, IANA timezone, field count) reported by line.",
  },
  'outbound.lists-import-limits': {
    source: 'decisions Run surfaces (Contact lists); contract upload limits',
    behavior:
      'An upload above 10 MB is 413 payload_too_large; a CSV without a phone header is 400 validation_error (field file); above 50,000 rows it is 403 plan_limit_reached; nothing is imported then.',
  },
  // Issue 16 (profiles)
  'outbound.profiles': {
    source: 'decisions Run surfaces (Profiles)',
    behavior:
      'POST /agents/{agt}/profiles answers 201 with every field (prf_<n>, status draft, prompt_version null); GET lists them newest first with a cursor; GET/PATCH /profiles/{prf} read and patch (unknown keys unsupported_field, empty patch empty_update); a change of role, goal, greeting or capabilities sets status back to draft; clone answers 201 "<name> (copy)" in draft.',
  },
  'outbound.profiles-capabilities': {
    source: 'decisions Run surfaces (Profiles); issue: outbound capabilities',
    behavior:
      'capabilities must name installed capabilities whose outbound flag is true (GET /outbound-capabilities), else 400 validation_error with field capabilities.',
  },
  'outbound.profiles-isolation': {
    source: 'decisions Run surfaces (Profiles); contract tenant isolation',
    behavior:
      "Another account's profile is 404 not_found on read, patch, clone and build; another account's agent is 404 agent_not_found; reads need outbound:read and writes outbound:write (else 403 insufficient_scope).",
  },
  'outbound.profiles-build': {
    source: 'decisions Run surfaces (Profiles): build',
    behavior:
      "POST /profiles/{prf}/build answers 202 with the agent build object (one step instructions); the job writes the outbound prompt from the role, the goal and the agent's knowledge summary as an immutable prompt version whose label becomes prompt_version, and status turns ready; 409 build_in_progress while one is queued or running.",
  },
  'outbound.profiles-variables': {
    source: 'decisions Run surfaces (Profiles): {{variable}} placeholders',
    behavior:
      "variables[] lists the distinct {{name}} placeholders of role and greeting; fillProfile fills role, greeting and prompt from a call's variables and a missing one is 400 missing_variable naming variables.<name>; scanning is bounded by length checks.",
  },
  // Issue 16 (calls)
  'outbound.calls': {
    source: 'decisions Run surfaces (Calls)',
    behavior:
      'POST /calls {agent_id, to, profile_id or role, variables} answers 201 with every Call field (call_<n>, direction outbound, status ringing); the call is answered on the simulated network and completes with outcome answered, answered_at, ended_at and duration_s; GET /calls lists newest first with the status, agent_id, campaign_id, from and to filters and a keyset cursor.',
  },
  'outbound.calls-conversation': {
    source: 'decisions Run surfaces (Calls; Phone conversations)',
    behavior:
      "The answered call is a conv_u conversation with channel phone_outbound linked from the Call's conversation_id; it opens with the profile's greeting filled from the call's variables and holds the callee's words.",
  },
  'outbound.calls-events': {
    source: 'decisions Run surfaces (Calls); contract events',
    behavior:
      'Each end state emits call.completed, call.no_answer or call.failed with the Call as data, delivered to webhook endpoints and signed.',
  },
  'outbound.calls-voicemail': {
    source: 'issue 16: voicemail; contract unsupported_policy',
    behavior:
      "An answering machine (provider's AnsweredBy machine) completes the call with outcome voicemail after the profile's voicemail_message (policy leave_message) or at once (hang_up); another voicemail_policy is 400 unsupported_policy.",
  },
  'outbound.calls-validation': {
    source: 'decisions Run surfaces (Calls, Profiles)',
    behavior:
      'A missing {{variable}} is 400 missing_variable naming variables.<name>; a number that is not E.164 400 invalid_phone; profile_id and role together or neither 400 validation_error; an unknown key 400 unsupported_field; an unknown agent 404 agent_not_found, profile or from number 404 not_found.',
  },
  'outbound.calls-dnc': {
    source: 'decisions Run surfaces (Do-not-call): checked at dial time',
    behavior:
      "A number on the account's do-not-call list is 403 dnc_listed (field to); another account's list does not apply.",
  },
  'outbound.calls-cancel': {
    source: 'decisions Run surfaces (Calls): DELETE /calls/{call}',
    behavior:
      'DELETE cancels a queued or ringing call (200, status canceled, ended_at set; a ringing one is hung up at the provider); any other status is 409 call_not_cancelable.',
  },
  'outbound.calls-queue': {
    source: 'issue 16; decisions Run surfaces (Calls): above max_concurrent_calls a call waits queued',
    behavior:
      'With every line of the account in use (ringing or in progress calls and inbound calls), a new call answers 201 queued with started_at null, and dials (ringing) as soon as a line frees.',
  },
  'outbound.calls-quota': {
    source: 'decisions Run surfaces (Calls); contract call quotas',
    behavior: 'max_calls_per_day used up is 429 quota_exceeded with Retry-After until 00:00 UTC.',
  },
  'outbound.calls-twilio': {
    source: 'decisions Run surfaces (Telephony providers, Calls)',
    behavior:
      "With SVC_TELEPHONY=twilio, POST /calls creates the call through the REST Calls API (To, From, Url and StatusCallback naming the call, machine detection); the signed answer request gets <Connect><Stream> for the call's phone_outbound conversation; signed status callbacks complete it or end it as no_answer.",
  },
  'outbound.calls-billing': {
    source: 'contract billing: POST /calls 402 payment_required',
    behavior: 'An account whose balance check fails gets 402 payment_required on POST /calls and no call is written.',
  },
  'outbound.mcp': {
    source: 'issue 16: MCP tools with the REST scopes',
    behavior:
      'The connector offers place_call, get_call, add_to_do_not_call and get_campaign_progress over their REST routes: a call placed through a tool ends like one placed over HTTP, a do-not-call number is then refused (dnc_listed tool error), and errors are tool errors.',
  },
  'outbound.capabilities-fire': {
    source: 'issue 16: outbound capabilities fire during outbound calls as in chat',
    behavior:
      "GET /outbound-capabilities lists the capabilities a profile may carry; on a call of that profile they fire through the chat engine's tool calls and land in the transcript as tool turns; a capability the profile does not carry is not offered.",
  },
  'outbound.calls-isolation': {
    source: 'contract tenant isolation; Scopes',
    behavior:
      "Another account's call is 404 not_found on read and cancel and absent from lists; its agent 404 agent_not_found and its profile 404 not_found; reads need outbound:read and writes outbound:write (else 403 insufficient_scope).",
  },
  // Issue 16 (campaigns)
  'outbound.campaigns': {
    source: 'decisions Run surfaces (Campaigns)',
    behavior:
      "POST /campaigns answers 201 with every field (cmp_<n>, status draft, defaults max_concurrent 1, max_attempts 1, retry_delay_minutes 60, progress all 0, started_at and finished_at null); GET /campaigns lists newest first with a keyset cursor bound to the agent_id and status filters; GET /campaigns/{cmp} reads one; GET /campaigns/{cmp}/progress is {total, pending, in_progress, completed, no_answer, failed, dnc_skipped, outcomes}, the same object as the campaign's progress; GET /campaigns/{cmp}/contacts pages {item_id, phone_e164, status, attempts, last_call_id, outcome, next_attempt_at} in item order, filtered by status.",
  },
  'outbound.campaigns-validation': {
    source: 'decisions Run surfaces (Campaigns); issue 16 campaigns',
    behavior:
      'The create body is strict (unknown key 400 unsupported_field); name 1..200; schedule {timezone IANA (stored canonical), days distinct mon..sun, start and end HH:MM with end 24:00 allowed and start < end}; max_concurrent 1..50, max_attempts 1..10, retry_delay_minutes 0..10080; a profile or list of another agent of the account is 400 validation_error on profile_id or list_id; anything else 400 validation_error naming the field.',
  },
  'outbound.campaigns-transitions': {
    source: 'decisions Run surfaces (Campaigns): start, pause, stop',
    behavior:
      "start: draft → running (the first start copies the list's items as pending contacts with 0 attempts and sets started_at; an empty list completes the campaign at once), paused → running; pause: running → paused; stop: draft, running or paused → stopped with finished_at; any other transition is 409 invalid_state naming the current status; two concurrent starts of one draft give one 200 and one 409.",
  },
  'outbound.campaigns-isolation': {
    source: 'decisions Run surfaces (Campaigns); contract tenant isolation',
    behavior:
      "Another account's campaign is 404 not_found on read, start, pause, stop, progress and contacts and absent from lists; another account's agent is 404 agent_not_found and its profile or list 404 not_found on create; reads need outbound:read and writes outbound:write (else 403 insufficient_scope).",
  },
  'outbound.campaigns-run': {
    source: 'issue 16: campaigns (must show)',
    behavior:
      'A started campaign dials its contacts by itself and completes when every contact is final: progress adds up (completed, no_answer, failed, dnc_skipped), do-not-call numbers are skipped, no-answers are retried after retry_delay_minutes up to max_attempts, no number is called more than max_attempts times, and the calls never overlap beyond max_concurrent; on PostgreSQL with two instances dialling.',
  },
  'outbound.campaigns-restart': {
    source: 'issue 16: campaigns survive a restart',
    behavior:
      'A campaign whose server is SIGKILLed twice while dialling completes with the same final counts; calls of the dead instance are reconciled (ringing: no_answer, in progress: completed with outcome interrupted) and no contact is dialled twice for the same attempt (unique campaign, contact, attempt).',
  },
  'outbound.campaigns-window': {
    source: 'decisions Run surfaces (Campaigns): schedule window',
    behavior: "A campaign dials only inside its schedule window, read in the contact's timezone, else the campaign's.",
  },
  'outbound.campaigns-pause': {
    source: 'issue 16: pause stops new dials at once',
    behavior:
      'A paused campaign places no new call while its calls in flight end; start resumes dialling; stop ends it.',
  },
  'widget.public-api': {
    source: 'decisions Run surfaces (Widget runtime); docs/decisions.md "Widget public API (issue 17)"',
    behavior:
      "POST /v1/widget/conversations answers 201 {conversation_id (conv_p<n>), visitor_token, greeting} for the agent's public token from an allowed Origin; the conversation is channel widget, visible to the account in GET /conversations; POST /v1/widget/conversations/{conv}/messages answers {turn, turns} from the agent's knowledge; unknown keys are 400 unsupported_field and an empty text 400 validation_error (field text).",
  },
  'widget.cors': {
    source: 'decisions Run surfaces (Widget runtime): CORS only for allowed_domains',
    behavior:
      "Widget routes answer a preflight and echo Access-Control-Allow-Origin (with Vary: Origin) only for an Origin whose host is in the agent's allowed_domains; another Origin, or none, is 403 origin_not_allowed with no Access-Control-Allow-Origin; API routes answer no CORS to such an Origin.",
  },
  'widget.tokens': {
    source: 'decisions Run surfaces (Widget runtime): public_token, visitor_token',
    behavior:
      "A missing, malformed or unknown widget token is 401 invalid_widget_token; a regenerated token refuses the old one at once; an API key on a widget route is 401 invalid_widget_token; a widget or visitor token as a bearer on an API route is 401 invalid_credentials; a message needs the conversation's visitor token (else 403 invalid_visitor_token) and another agent's conversation is 404.",
  },
  'widget.events': {
    source: 'decisions Run surfaces (Widget runtime): events counted per agent in GET /metrics',
    behavior:
      'POST /v1/widget/events {type, conversation_id?, data?} answers 204 for the five event types and is counted per agent and type in GET /metrics widget_events (totals and agents); an unknown type or data over 2 KB is 400 validation_error.',
  },
  'widget.limits': {
    source: 'decisions Run surfaces (Widget runtime): rate-limited per token and IP',
    behavior:
      'Widget requests are limited per client IP (default 60 a minute) and per token (600 a minute); past the limit 429 rate_limited with Retry-After.',
  },
  'widget.config': {
    source: 'decisions Run surfaces (Widget runtime); docs/decisions.md "Widget, config and the per-IP 429"',
    behavior:
      "GET /v1/widget/config answers {appearance (every key, as GET /agents/{agt}/widget presents it), greeting (a new conversation's turn 0)} to the agent's token from an allowed Origin, with CORS and a GET preflight; POST /v1/widget/conversations answers the appearance too; another Origin is 403 origin_not_allowed and a bad token 401 invalid_widget_token, neither with Access-Control-Allow-Origin.",
  },
  'widget.preflight-limit': {
    source:
      'decisions Run surfaces (Widget runtime): rate-limited per IP; docs/decisions.md "Widget, config and the per-IP 429"',
    behavior:
      "A widget preflight (OPTIONS) spends a point of the per-IP limit (widget_ip) before the query that answers it: past the limit it is 429 rate_limited whatever its Origin, with no CORS headers, and the same budget refuses that IP's requests.",
  },
  'widget.limit-cors': {
    source: 'docs/decisions.md "Widget, config and the per-IP 429" (CORS on the per-IP 429)',
    behavior:
      'A per-IP 429 on a widget route carries Access-Control-Allow-Origin, Vary and the exposed headers when this instance admitted that token from that Origin within ten minutes (no query); from any other Origin, token or none it carries none.',
  },
  'widget.browser.allowed': {
    source: 'issue 17: the embeddable script in a real browser',
    behavior:
      "In headless Chromium, a page on an allowed host embedding the agent's embed_snippet as pasted mounts the launcher (painted with the settings), opens the dialog, sends a question and shows an answer quoting the site's knowledge.",
    browser: true,
  },
  'widget.browser.disallowed': {
    source: 'issue 17: CORS only for allowed_domains, in a real browser',
    behavior:
      'In headless Chromium, a page on a host not in allowed_domains embedding the same snippet mounts no widget host element: the settings preflight is 403 without Access-Control-Allow-Origin, the browser refuses the request, and the script warns once in the console.',
    browser: true,
  },
  'widget.browser.reload': {
    source: 'decisions docs/decisions.md "Widget script and demo page": sessionStorage conversation',
    behavior:
      'In headless Chromium, a reload keeps the conversation: the same conversation id in sessionStorage, the earlier messages re-rendered, and a further question continues that conversation (its turns in GET /conversations/{id}).',
    browser: true,
  },
  'widget.browser.layout-shift': {
    source: 'decisions Run surfaces (Widget runtime): no host-page layout shift',
    behavior:
      "In headless Chromium, loading, mounting and opening the widget causes a cumulative layout shift of 0 (every layout-shift entry, input or not) and leaves the bounding boxes of the page's main content unchanged.",
    browser: true,
  },
  'widget.script': {
    source: 'issue 17: the embeddable script; decisions Run surfaces (Widget runtime)',
    behavior:
      'GET /widget.js (no key) answers the built widget as application/javascript: the unversioned URL public, max-age=300, /widget.js?v=<version> of the current version public, max-age=31536000, immutable (any other v short-lived), an ETag answered with 304, gzip on request; under 30 KB gzipped, no secrets in it, not an API route in the OpenAPI document.',
  },
  'widget.demo': {
    source: 'issue 17: the demo page',
    behavior:
      "GET /widget-demo?agent=agt_… serves, with SVC_WIDGET_DEMO=1 and outside production, an HTML page embedding the agent's snippet (with its appearance as data-* attributes) and warns when the page host is not an allowed domain; 400 without an agent id, 404 for an unknown agent, 409 for an agent with no token; under SVC_ENV=production it is 404 not_found.",
  },
  'widget.voice-chat': {
    source: 'decisions Run surfaces (Voice chat); issue 17 part 3',
    behavior:
      "GET /v1/widget/voice?token=wpk_… from an allowed Origin upgrades to a WebSocket: ready {conversation_id conv_u<n>, sample_rate 16000}, the greeting and each answer as binary PCM16 at 16 kHz with captions and marks, the visitor's PCM16 transcribed by the speech provider and answered with the voice_chat prompt from the agent's knowledge; stop (or a close) ends it with end {reason}; the account reads a completed voice_chat conversation whose turns carry audio offsets.",
  },
  'widget.voice-refusals': {
    source: 'decisions Run surfaces (Voice chat): same token, origin and visitor rules as the widget',
    behavior:
      'The voice upgrade without a valid token or with an Authorization header is 401 invalid_widget_token, from another Origin or none 403 origin_not_allowed (the JSON envelope as the upgrade answer); plain HTTP is 426; audio faster than 1.5× real time closes the socket with 1008 and the conversation still completes; the socket is documented in /v1/openapi.json.',
  },
  'widget.voice-barge-in': {
    source: "decisions Run surfaces (Voice chat): barge-in honoured when the agent's barge_in is true",
    behavior:
      "Visitor speech over the agent's unplayed audio makes the server send clear (drop what has not played) when barge_in is true, and not when it is false.",
  },
  'widget.browser-voice': {
    source: "issue 17 must show: voice chat with Chromium's fake microphone and a local fake speech server",
    browser: true,
    behavior:
      "In headless Chromium with a fake microphone playing the visitor's question, the widget's microphone button opens a voice chat: the question is transcribed by the (fake, OpenAI-compatible) speech server and shown as the visitor's caption, the answer from the site's knowledge is shown and played, and the account reads a completed voice_chat conversation with the transcribed turns.",
  },
  'partners.create-member': {
    source: 'decisions Run surfaces (Partners); issue 18 part 3',
    behavior:
      "POST /partners/members {email, name?, company_name?, plan?, external_ids?} with a personal key holding partners:manage answers 201 User with partner_id the partner's usr_, creating the member's user, account and subscription; an unknown field is 400 unsupported_field, a bad value 400 validation_error (or invalid_email) naming the field, a taken e-mail 409 email_exists.",
  },
  'partners.read-list': {
    source: 'decisions Run surfaces (Partners)',
    behavior:
      "GET /partners/members/{usr} reads one of the partner's own members (another partner's member, an ordinary user or an unknown id is 404 not_found); GET /partners/members lists the partner's members only, newest first, keyset on (created_at, id) with the list envelope and cursor.",
  },
  'partners.isolation': {
    source: 'issue 18 must show: two partners and their members, each sees only its own',
    behavior:
      "Of two partners with members, each lists and reads only its own members, reaches only its own members' accounts through the ordinary routes (another partner's member's account is 403 forbidden_account or 404), and cannot issue keys or login links for the other's members (403 forbidden_account).",
  },
  'partners.member-accounts': {
    source: "decisions Run surfaces (Partners): its key's account_ids grow with each member",
    behavior:
      "A partner's existing key reaches a member's account on the very next request after POST /partners/members (GET /accounts/{acc}, GET /accounts lists it, X-Svc-Account on data routes such as GET /agents), and no other tenant's account.",
  },
  'partners.member-keys': {
    source: 'decisions Run surfaces (Partners): a partner may issue keys for its members',
    behavior:
      "POST /users/{member}/credentials with a partners:manage key issues a key of the member's user on the member's account only, with scopes the partner key holds; partners:manage itself is 400 invalid_scope; the member's key works on its account and not on the partner's; a key with partners:manage but without credentials:manage cannot issue keys for its own user (403 insufficient_scope).",
  },
  'partners.login-links': {
    source: "decisions Login links: a partners:manage key only for its members' users",
    behavior:
      "A partner key issues a login link for its member's user; the session it opens holds at most the partner key's scopes and never partners:manage; a password login's session never holds partners:manage (only the master key confers it), so no user makes itself a partner from the dashboard.",
  },
  'partners.audit': {
    source: 'issue 18: everything a partner does to a member is audited with cross_account true',
    behavior:
      "Audit rows of a partner key creating, reading or listing members, issuing keys or login links for them, and acting on a member's account (path or X-Svc-Account) carry cross_account true and the member's account id; its requests on its own account stay cross_account false.",
  },
  'partners.refusals': {
    source: 'issue 18 must show: every refusal',
    behavior:
      'The partner routes without a key are 401 missing_credentials; with a key lacking partners:manage, or with the master key (which holds no such scope; it creates tenants with POST /users), 403 insufficient_scope; a malformed member id is 400 invalid_id.',
  },
  'users.partner-id': {
    source: 'decisions Run surfaces (Partners): User with partner_id',
    behavior:
      "The User shape carries partner_id: null for users made with POST /users, the partner's usr_ for members, in POST /users, GET /users/{usr} and GET /users.",
  },
  'partners.member-accounts-cross-instance': {
    source: 'issue 18 (a member created must be reachable by the partner key on every instance)',
    behavior:
      "A member created through one instance is reachable by the partner's key already cached on another instance on the same PostgreSQL within milliseconds (the creating transaction notifies user:<partner>).",
    engines: ['postgres'],
  },
  'admin.master-only': {
    source: 'decisions Run surfaces (Operator surface): master key only; issue 18',
    behavior:
      'Every /v1/admin operation (tag Operator in the OpenAPI document) answers 401 without a credential and 403 forbidden to any credential other than the master key, whatever its scopes.',
  },
  'admin.action-log': {
    source: 'decisions Run surfaces (Operator surface): every write recorded in GET /admin/actions',
    behavior:
      'GET /admin/actions lists operator writes newest first as {action_id (act_<n>), action, target, params, request_id, created_at}, keyset-paged, filtered by action and target; each successful /admin write adds one row with its request id and its body without secrets.',
  },
  'admin.customers.refusals': {
    source: 'decisions Run surfaces (Operator surface); issue 18 must show: every refusal',
    behavior:
      'Every customer and wallet route of /admin (overview, customers, customer, wallet, credits, plan, status, login links) answers 401 without a key and 403 forbidden to a tenant key (any plan), and a refused write changes nothing and is not in the action log.',
  },
  'admin.customers.overview': {
    source: 'decisions Run surfaces (Operator surface): GET /admin/overview',
    behavior:
      "GET /admin/overview counts users, accounts by plan and status, agents, conversations and calls started today and in 7 days, the wallet total, 5xx in 24 h and the queue depth; a new conversation shows in today's count.",
  },
  'admin.customers.search': {
    source: 'decisions Run surfaces (Operator surface): GET /admin/customers',
    behavior:
      'GET /admin/customers finds customers by a part of the e-mail, name or company (case-insensitive, % and _ literal), filters by status and plan (an unknown value is 400 unsupported_filter), and pages newest first by cursor.',
  },
  'admin.customers.customer': {
    source: 'decisions Run surfaces (Operator surface): GET /admin/customers/{usr}',
    behavior:
      "GET /admin/customers/{usr} shows the user, the account, its agents, the 30-day usage by channel, the wallet and the account's recent 4xx/5xx requests (with request ids); an unknown usr is 404 and a malformed one 400 invalid_id on every customer route.",
  },
  'admin.customers.plan': {
    source: 'decisions Run surfaces (Operator surface): PATCH /admin/customers/{usr}/plan',
    behavior:
      'PATCH /admin/customers/{usr}/plan {plan, plan_expires_at?, plan_limit?} changes the plan, its expiry and the monthly limit (the plan price by default), seen at once through the ordinary API; empty is 400 empty_update, an unknown key 400 unsupported_field, a bad value 400 validation_error/invalid_date with field; recorded in the action log.',
  },
  'admin.customers.status': {
    source: 'decisions Run surfaces (Operator surface) and Security rules (Suspension); issue 18 part 1',
    behavior:
      "PATCH /admin/customers/{usr}/status {status: suspended, reason} makes the account's keys answer 403 account_suspended on the very next request; {status: active} lets them in again at once; reason is required; both are in the action log with the reason.",
  },
  'admin.customers.login-links': {
    source: 'decisions Run surfaces (Operator surface): POST /admin/customers/{usr}/login-links',
    behavior:
      "POST /admin/customers/{usr}/login-links answers a one-time link whose token opens a dashboard session for the customer's user once; the token is not in the action log.",
  },
  'admin.customers.wallet-ledger': {
    source:
      'issue 18 part 2: the wallet as a ledger; contract Balance (plan_limit: spending above it is charged to the wallet)',
    behavior:
      "Credits, usage debits (spending above plan_limit in a UTC month, settled idempotently) and adjustments are rows of GET /admin/customers/{usr}/wallet; after API chats and a simulated phone call over the limit, GET /accounts/{acc}/balance wallet_balance equals the sum of the entries' amounts and the newest balance_after, every balance_after is the running sum, the debits equal the month's overage, and reading again adds nothing. Bad credits are 400 validation_error with field.",
  },
  'admin.customers.wallet-topup': {
    source: 'decisions Run surfaces (Operator surface): POST /admin/customers/{usr}/wallet/credits; issue 18 part 2',
    behavior:
      'An account blocked with 402 payment_required (wallet 0, spending over the plan limit) gets a credit and its next POST /v1/conversations succeeds.',
  },
  'admin.system-refusals': {
    source: 'issue 18 must show: every refusal; decisions Run surfaces (Operator surface: master key only)',
    behavior:
      'Every route of agents, credentials, system, config, reload, ai-models and migrations answers 401 missing_credentials without a key and 403 forbidden to a tenant key holding every scope, and does nothing.',
  },
  'admin.agents-list': {
    source: 'decisions Run surfaces (Operator surface): GET /admin/agents',
    behavior:
      "GET /admin/agents lists every account's agents newest first with account name and status and paused/paused_at, filtered by account_id, paused and q, with a keyset cursor; bad filters are 400.",
  },
  'admin.agent-pause': {
    source: 'issue 18: a paused agent refuses new conversations and calls with 409 agent_paused',
    behavior:
      'After POST /admin/agents/{agt}/actions {action: pause}, POST /conversations, a message on an existing conversation, POST /widget/conversations, the voice chat socket (error agent_paused) and POST /calls are refused with 409 agent_paused, an inbound call is refused with a failed conversation (failure_reason agent_paused), and a running campaign of the agent dials nothing; resume restores them and dials the held campaign at once.',
  },
  'admin.agent-rebuild': {
    source: 'decisions Run surfaces (Operator surface): POST /admin/agents/{agt}/actions {action: rebuild}',
    behavior:
      'rebuild queues a build through the ordinary build path (from_step honoured) that succeeds; an unknown action or missing action is 400 validation_error, from_step without rebuild 400 validation_error, an extra key 400 unsupported_field, an unknown agent 404 agent_not_found, a malformed id 400 invalid_id.',
  },
  'admin.system-action-log': {
    source: 'issue 18: the action log: every operator write with its request id',
    behavior:
      "Each operator write of this surface (agent.pause, agent.resume, agent.rebuild, credential.revoke, config.update, config.reload) appears in GET /admin/actions with the request id of the write's response, its target and its parameters.",
  },
  'admin.credentials': {
    source: 'decisions Run surfaces (Operator surface): GET/DELETE /admin/credentials/{key}',
    behavior:
      "GET /admin/credentials/{key} shows any key without its secret, with its source, user and accounts; DELETE revokes it (204, again 204) and the key's very next request is 401 invalid_credentials; unknown key 404 not_found, malformed id 400 invalid_id.",
  },
  'admin.system': {
    source: 'decisions Run surfaces (Operator surface): system status and errors, ai-models, migrations',
    behavior:
      'GET /admin/system/status reports the database probe, queue depth, live instances (the answering one current), version and uptime; GET /admin/system/errors lists recent 5xx and failed jobs (bad hours 400 validation_error, bad limit 400 invalid_limit); GET /admin/ai-models lists the chat engines with their models, one active; GET /admin/migrations the applied ledger in order with checksums.',
  },
  'admin.config-validation': {
    source: 'issue 18 config; contract errors (unsupported_field, empty_update, validation_error)',
    behavior:
      'PATCH /admin/config takes only the rate classes and quota names: an unknown key is 400 unsupported_field, an empty patch 400 empty_update, a figure that is not a whole number from 1 to 1,000,000 400 validation_error naming the field; nothing is stored on a refusal.',
  },
  'admin.config-effect': {
    source: 'issue 18 must show: the config-reload effect observed through the ordinary API',
    behavior:
      "Lowering the read class with PATCH /admin/config makes a tenant's reads 429 rate_limited within 10 s without a restart; null removes the override; overrides stored in platform_config apply at boot and POST /admin/reload applies them at once.",
  },
  'admin.no-mcp': {
    source: 'issue 18: MCP: no operator tools; the master key stays refused on /mcp',
    behavior: 'tools/list names no operator route, and the master key is refused on /mcp with 401.',
  },
  'admin.config-poll': {
    source: 'issue 18: config picked up by every instance within 10 s, without a restart',
    engines: ['postgres'],
    behavior:
      'With two instances on one PostgreSQL database, a PATCH /admin/config through one, or a platform_config row written by hand, limits reads on the other (429) within 10 s, without a restart or a reload.',
  },
  'admin.config-notify': {
    source: 'issue 36; decisions Issue 36: idle, the minute sweeps',
    engines: ['postgres'],
    behavior:
      "A write to platform_config notifies every instance (the table's trigger), which reads it at once: a row written by hand limits reads within 3 s, sooner than the 5 s poll it replaces (the poll stays as a 60 s backstop while the LISTEN is in place).",
  },
  'admin.system-errors': {
    source: 'decisions Run surfaces (Operator surface): GET /admin/system/errors (recent 5xx and failed jobs)',
    engines: ['postgres'],
    behavior:
      'A job failed through pg-boss and a 5xx audit row appear in GET /admin/system/errors (the job with its queue name and error message, the request with its request id, status and error code), and the failed job counts in GET /admin/system/status queue.failed_24h.',
  },
  'reliability.chaos': {
    source: 'issue 19: crashes (a chaos test that SIGKILLs one of two instances at random moments)',
    engines: ['postgres'],
    behavior:
      "Two instances on one PostgreSQL behind the round-robin proxy run chat turns, agent builds, KB ingests, campaign dialling, simulated calls and webhook fan-out while a seeded PRNG (printed; SVC_CHAOS_SEED replays it) SIGKILLs one of them at random moments and restarts it. Only requests overlapping a kill may fail, and only with a transport error or the proxy's 502; then every accepted write is readable and none is duplicated, every turn exists once with contiguous indexes, builds, ingests, campaigns and calls finish, every event reaches every subscribed endpoint, and the daily quota counters equal the work.",
  },
  'reliability.jobs-takeover': {
    source: 'issue 19: crashes (finding of the chaos test: builds and ingests of a killed instance waited 15 minutes)',
    engines: ['postgres'],
    behavior:
      'A build and a KB page ingest whose instance is SIGKILLed mid-run are finished by another instance on the same queue within a minute (the queue fails the jobs of an instance that stopped beating, and a retried build job takes its running build over), instead of staying running or processing until pg-boss expires the job after 15 minutes.',
  },
  'reliability.jobs-unnamed': {
    source:
      'issue 19: crashes (finding of a CI chaos run: a document stayed processing past the drain; a job fetched by an instance killed before it wrote its id waited for the 15-minute expiry)',
    behavior:
      'An active job that carries no instance id after the stale window (its process died between the fetch and writing its id) is failed by the reaper so that pg-boss retries it, and its work finishes within seconds of a restart instead of after 15 minutes.',
  },
  'builds.requeue-running': {
    source:
      'issue 19: crashes (a build whose jobs all ended without recording its end, e.g. failed after their retries, stayed running for good)',
    behavior:
      'A build (agent or profile) running for 15 minutes with no live job in the queue is sent again by the requeue sweep (at start and every minute), and the new delivery takes it over as stale and finishes it; a build running for less than that is left to its worker.',
  },
  'kb.ingest-requeue': {
    source:
      'issue 19: crashes (finding of the chaos test: a document committed before its job was sent stayed processing)',
    behavior:
      'A knowledge document still processing a minute after its creation with no live kb.ingest job in the queue (its instance died between the commit and the send, or every job sent ended failed) is ingested by the requeue sweep, which runs at start and every minute; one whose ingest failed three times is marked failed with the public internal-error message instead of being sent again.',
  },
  'scale.shared-limits': {
    source: 'issue 19: rate limits and the unauthenticated-failure limit are global across instances',
    engines: ['postgres'],
    behavior:
      'Two instances on one PostgreSQL and one Redis: one credential spread over both gets one read budget (the next request past it is 429 on either), and one client IP gets 20 failed authentications in all, not 20 per instance.',
  },
  'scale.rolling-restart': {
    source: 'issue 19: a rolling restart of 2 instances under load gives 0 failed requests',
    engines: ['postgres'],
    behavior:
      'Behind the cluster proxy, continuous reads, writes and chat turns while each of two instances in turn is SIGTERMed (exiting 0) and started again: every response is 2xx, none 5xx or lost.',
  },
  'scale.shutdown-releases-claims': {
    source: 'issue 19: SIGTERM releases job claims',
    engines: ['postgres'],
    behavior:
      'An instance SIGTERMed while a webhook send hangs gives the delivery lease back within its 2 s bound and exits 0; the other instance delivers it at once instead of after the lease lapses.',
  },
  'scale.redis-optional': {
    source: 'issue 19: Redis is optional at run time',
    engines: ['postgres'],
    behavior:
      "With REDIS_URL set and Redis stopped, requests keep answering (no 5xx): the rate limits count in each instance's memory until Redis is back, and a limit still answers 429.",
  },
  'blobs.driver': {
    source: 'issue 19: blobs go through an unstorage driver chosen by configuration (decisions Blob storage)',
    behavior:
      'SVC_BLOB_DRIVER=s3 with SVC_BLOB_URL stores an upload as a SigV4-signed object in the bucket and the ingest job reads it back; s3 without a usable URL stops the boot naming what is missing.',
  },
  'shutdown.graceful': {
    source: 'issue 19: SIGTERM finishes in-flight requests within a bound and exits 0 (decisions Graceful shutdown)',
    behavior:
      'On SIGTERM /v1/health answers 503 (status down, components.api down) while the instance drains; a new voice session is refused 503 while a live one is waited for (the port stays open until it ends); a chat turn in flight when the signal lands completes with 200 and Connection: close; the process exits 0.',
  },
  // issue 31 — agent tests and test runs
  'quality.tests.crud': {
    source: 'decisions Quality (wave 3): Agent tests',
    behavior:
      'Tests tst_<n> {test_id, agent_id, name, surface, turns: [{user, expect}], reference_answers, created_at, updated_at}: POST /agents/{agt}/tests (201) and GET (newest first, keyset), GET/PATCH/DELETE /tests/{tst}; unknown keys are 400 unsupported_field, an empty patch 400 empty_update, a bad value 400 validation_error naming its field (turns.<i>.expect.<j>.<key>); reads need agents:read, writes agents:write.',
  },
  'quality.tests.caps': {
    source: 'decisions Quality (wave 3): Agent tests',
    behavior:
      'An agent holds at most 100 tests (the 101st is 403 plan_limit_reached, a delete frees a place) and a test at most 20 turns (400 validation_error on turns).',
  },
  'quality.tests.regex-compile': {
    source: 'decisions Quality (wave 3): Agent tests (regex on a linear-time engine)',
    behavior:
      'A regex assertion whose pattern the linear-time engine (RE2) cannot compile (a backreference, lookaround) or is longer than 200 characters is 400 validation_error naming turns.<i>.expect.<j>.pattern, on create and on patch; an RE2 pattern such as (a+)+$ is accepted.',
  },
  'quality.tests.from-conversation': {
    source: 'decisions Quality (wave 3): Agent tests',
    behavior:
      "POST /agents/{agt}/tests/from-conversation {conversation_id} answers 201 with a test whose turns are the conversation's visitor turns (expect: []) and whose reference_answers are the agent's answers; a conversation of another agent is 400 validation_error, of another account 404, and a credential without conversations:read 403 insufficient_scope.",
  },
  'quality.tests.isolation': {
    source: 'decisions Quality (wave 3): Agent tests, Test runs',
    behavior:
      "Another tenant's tst_<n> and run_<n> are 404 not_found on every read and write, and its agent is 404 agent_not_found for tests, runs and from-conversation.",
  },
  'quality.runs.assertions': {
    source: 'decisions Quality (wave 3): Agent tests, Test runs',
    behavior:
      "A run grades each turn's assertions on that turn's answer: contains and not_contains (case-insensitive), regex, tool_called and tool_not_called, unanswered, escalated each pass and fail as the answer says, with {type, passed, detail}; judge is skipped (passed null) with the local engine; an attempt with a failed assertion is failed, the run's counters, pass_rate and status follow.",
  },
  'quality.runs.judge': {
    source: 'decisions Quality (wave 3): Agent tests (judge graded by the chat engine)',
    behavior:
      "With a model engine a judge rubric is graded by the agent's chat engine: its PASS passes the assertion and its FAIL fails it, the grader's reason in detail.",
  },
  'quality.runs.repeat': {
    source: 'decisions Quality (wave 3): Test runs',
    behavior:
      'repeat N (1–10, else 400 validation_error) runs each test N times: one result per test and attempt 1..N, total = tests × N, passed + failed + skipped = total.',
  },
  'quality.runs.candidate': {
    source: 'decisions Quality (wave 3): Test runs',
    behavior:
      "prompt_version (a label of the agent's prompt versions) makes the tests of its surface talk to that version's prompt while the active version stays active and the agent unchanged; an unknown label is 400 validation_error.",
  },
  'quality.runs.phone': {
    source: 'decisions Quality (wave 3): Test runs (phone tests through the simulated call path)',
    behavior:
      "A phone test runs as a simulated call through the voice loop (offline speech): each utterance is transcribed and answered from the agent's knowledge, a transfer is recorded as a tool and an escalation, and the call leaves no conversation and no usage.",
  },
  'quality.runs.dry-tools': {
    source: 'decisions Quality (wave 3): Test runs (tools run dry)',
    behavior:
      "Tools called in a run are recorded in the turn's tools[] with their arguments and result, but no mail is sent (the mail outbox stays empty, while the same message in a real chat mails), no webhook fires for the turns and no call or transfer is placed.",
  },
  'quality.runs.not-billed': {
    source: 'decisions Quality (wave 3): Test runs',
    behavior:
      'A run, chat and phone tests alike, adds no conversation to GET /conversations and no usage to GET /accounts/{acc}/usage, and does not take chat_messages.',
  },
  'quality.runs.quota': {
    source: 'decisions Quality (wave 3): Test runs (daily test_turns quota)',
    behavior:
      "A run takes its turns (tests' turns × repeat) from the daily test_turns quota (default 2,000; SVC_QUOTAS) when it is asked for: past it 429 quota_exceeded with Retry-After and nothing is queued; GET /accounts/{acc}/limits shows quotas.test_turns.",
  },
  'quality.runs.lifecycle': {
    source: 'decisions Quality (wave 3): Test runs',
    behavior:
      'POST /agents/{agt}/test-runs answers 202 run_<n> queued; the run ends passed, failed or error with finished_at; GET /test-runs/{run} reads it with results, GET /agents/{agt}/test-runs lists runs newest first with keyset pages; an unknown test id or an agent without tests is 400 validation_error.',
  },
  'quality.runs.event': {
    source: 'decisions Quality (wave 3): Test runs (event test_run.completed)',
    behavior:
      'A webhook endpoint subscribed to test_run.completed receives it once per run, signed, with the run (as GET /test-runs/{run} shows it) as data.',
  },
  'quality.runs.mcp': {
    source: 'decisions Quality (wave 3): Test runs (MCP tools)',
    behavior:
      'The MCP tools run_agent_tests and get_test_run queue a run and read it, their inputs taken from the REST schemas.',
  },
  'quality.runs.regex-linear': {
    source: 'issue 31 Must show: the regex engine runs catastrophic patterns in linear time',
    behavior:
      'A regex assertion (a+)+$ against an answer of 100,000 a characters is graded (passed) while GET /v1/health, probed throughout, keeps answering within 1 s.',
  },
  'quality.analysis.setting': {
    source: 'decisions Quality (wave 3): Conversation analysis (agent setting analysis, analysis_version)',
    behavior:
      "PATCH /agents/{agt} {analysis} takes up to 25 fields (snake_case names of at most 40 characters, unique; type string, number, boolean, enum or date; enum listed iff type enum) and success_criteria, or null; a bad item is 400 validation_error naming its path (analysis.fields.3.name); each change bumps the agent's analysis_version (an unchanged value bumps nothing) and GET shows analysis and analysis_version.",
  },
  'quality.analysis.chat': {
    source:
      'decisions Quality (wave 3): Conversation analysis (every conversation that ends is analysed once per version; local engine)',
    behavior:
      'An API chat that ends is analysed once in the background by the local engine: e-mail, phone, a number said about the field, a date, a yes answering an agent question naming the field and an enum value named verbatim are extracted from visitor turns, with success by the required fields.',
  },
  'quality.analysis.phone': {
    source: 'decisions Quality (wave 3): Conversation analysis (call end)',
    behavior: 'A simulated inbound call that ends is analysed from its stored (transcribed) turns like a chat.',
  },
  'quality.analysis.evidence': {
    source: 'issue 31: every value carries evidence offsets into the stored turn text',
    behavior:
      "Every value's evidence {turn_index, start, end} indexes the stored turn text, and text.slice(start, end) is the words the value came from.",
  },
  'quality.analysis.no-invented': {
    source: 'issue 31: a value without evidence is null, never invented',
    behavior:
      'A field the conversation does not state is null with no evidence; with the openai engine, a value whose quote is not in the transcript, or whose quote does not hold it, is nulled by the server, which locates every quote itself; the request uses structured output (response_format json_schema, strict).',
  },
  'quality.analysis.event': {
    source: 'decisions Quality (wave 3): Conversation analysis (event conversation.analyzed)',
    behavior:
      'Each analysis written emits conversation.analyzed once (data: conversation_id, account_id, agent_id, analysis), delivered to subscribed webhook endpoints.',
  },
  'quality.analysis.test-runs': {
    source: 'decisions Quality (wave 3): Conversation analysis; Test runs (a run leaves no conversation)',
    behavior:
      'The calls and chats of an agent test run are never analysed: a phone test run on an agent with an analysis setting emits no conversation.analyzed.',
  },
  'quality.analysis.include': {
    source: 'decisions Quality (wave 3): Conversation analysis (include=analysis on detail and list)',
    behavior:
      'include=analysis adds the newest analysis {analysis_version, values, evidence, success, analyzed_at} (null before one) to GET /conversations/{conv} and GET /conversations; without it neither carries the key.',
  },
  'quality.analysis.redaction': {
    source: 'decisions Quality (wave 3): Conversation analysis (redaction applies to values)',
    behavior:
      "With redact=true or the account's default_redaction, analysis values are masked as transcript text is (detail and list), the evidence still slicing the masked text to the masked value.",
  },
  'quality.analysis.versioned': {
    source: 'decisions Quality (wave 3): Conversation analysis (once per version)',
    behavior:
      "After a change of the setting, a conversation keeps its analysis of the old version until it is analysed at the new one; the new analysis carries the new analysis_version and the old one's event is not repeated.",
  },
  'quality.analysis.backfill': {
    source: 'decisions Quality (wave 3): Conversation analysis (POST /agents/{agt}/analysis/backfill)',
    behavior:
      'POST /agents/{agt}/analysis/backfill {from?, to?} answers 202 with pending and analyses, in batches in the background, the ended conversations lacking the current version; a second run finds none pending and adds nothing (one analysis and one event per conversation per version); an agent without analysis is 409 invalid_state.',
  },
  'quality.analysis.isolation': {
    source: 'decisions Quality (wave 3): Conversation analysis; decisions "Conversation analysis (issue 31)" (scopes)',
    behavior:
      "Another account cannot start an agent's backfill (404 agent_not_found) nor read its conversations' analyses; the backfill needs agents:write and include=analysis needs conversations:read (a summaries:read key is 403).",
  },
  // issue 31 — the test gate
  'quality.gate.setting': {
    source: 'decisions Quality (wave 3): Test gate',
    behavior:
      'test_gate {min_pass_rate: 0–1} or null is on the agent patch whitelist without a version bump and shown on the agent; a rate outside 0–1, not a number or missing is 400 validation_error with field test_gate.min_pass_rate, an unknown key 400 unsupported_field.',
  },
  'quality.gate.no-gate': {
    source: 'decisions Quality (wave 3): Test gate; docs/decisions.md Test gate (no tests)',
    behavior:
      'Without test_gate a prompt patch activates at once and runs no test; with a gate but no tests it activates too, with no run.',
  },
  'quality.gate.patch': {
    source: 'decisions Quality (wave 3): Test gate',
    behavior:
      "With test_gate, a PATCH changing a prompt field runs every test of the agent on the candidate: below the rate it answers 409 tests_failed whose message names the run_<n> and the first failing assertion (test name, turn, type and detail), the candidate is listed inactive, and nothing of the request (prompt or other fields) is written nor the agent's answers changed; a fixing patch passes, is activated and applies its other fields.",
  },
  'quality.gate.restore': {
    source: 'decisions Quality (wave 3): Test gate',
    behavior:
      'With test_gate, restoring a prompt version whose tests fail is 409 tests_failed naming the run and the failing assertion, the restored copy listed inactive and the agent unchanged; restoring a passing version answers 201 with it active.',
  },
  'quality.gate.build': {
    source: 'decisions Quality (wave 3): Test gate',
    behavior:
      "With test_gate, a build's instructions step whose prompts fail the tests ends failed with the tests_failed message (run and failing assertion named), its three candidates listed inactive and the agent unchanged; after a fix the rebuild succeeds and activates them.",
  },
  'quality.gate.local-instructions': {
    source:
      'issue 31 Must show (the demo offline); docs/decisions.md Test gate (the local engine reads its instructions)',
    behavior:
      "With the local engine, a question the knowledge does not answer is answered by the instruction sentence stating a fact of the business that holds the question's words (We open at 9 am on weekdays.), so a prompt patch changes the answer; a direction to the model is never an answer.",
  },
  // issue 32 — knowledge sync
  'fresh.sync.setting': {
    source: 'decisions Quality (wave 3): Knowledge sync (agent setting kb_sync)',
    behavior:
      'GET /agents/{agt} reads kb_sync {schedule: off, deletion: keep, reindex: true} until it is set; PATCH takes any of its keys (the others keep their value) without a new agent_version, null restores the default, a bad value is 400 validation_error naming kb_sync and another key 400 unsupported_field.',
  },
  'fresh.sync.resource': {
    source: 'decisions Quality (wave 3): Knowledge sync (POST kb/sync, GET kb/syncs)',
    behavior:
      "POST /agents/{agt}/kb/sync answers 202 with sync_<n> (trigger manual, status running); GET /agents/{agt}/kb/syncs lists the agent's syncs newest first and GET …/kb/syncs/{sync} reads one {sync_id, agent_id, trigger, status, pages_checked, not_modified, unchanged, added[], changed[], removed[], started_at, finished_at}; another account's agent or sync is 404.",
  },
  'fresh.sync.unchanged': {
    source: 'issue 32 Must show; decisions Knowledge sync (conditional requests, sitemap lastmod)',
    behavior:
      "A sync of an unchanged site sends If-None-Match with the stored ETag (and If-Modified-Since with the stored Last-Modified), gets 304 for every page or skips without any request a page whose sitemap lastmod is older than its last fetch, reports every page not_modified with nothing added, changed or removed, and leaves every document's text and updated_at as they were.",
  },
  'fresh.sync.changed': {
    source: 'issue 32 Must show; decisions Knowledge sync (main-content hash, re-ingest only what changed)',
    behavior:
      "When one page's main text changes, the sync reports exactly that page in changed (the others not_modified) and re-ingests only it: its document holds the new text, and the other documents keep their updated_at.",
  },
  'fresh.sync.boilerplate': {
    source: 'issue 32 Must show; decisions Knowledge sync (a change outside the main content is not a change)',
    behavior:
      'A page whose navigation, footer or date stamp changed (its ETag too) is fetched in full and counted unchanged: nothing is re-ingested and the summary does not become stale.',
  },
  'fresh.sync.added': {
    source: 'issue 32 Must show; decisions Knowledge sync (re-discovery within the page cap)',
    behavior:
      "A new page linked from a page of a crawled site is added by the next sync (in added, stored as a document of the site with its text), and the plan's page cap still bounds the agent's pages.",
  },
  'fresh.sync.removed': {
    source: 'issue 32 Must show; decisions Knowledge sync (404/410 by deletion)',
    behavior:
      'A page that answers 404 or 410 is in removed; with kb_sync.deletion keep its document stays, with remove the document is deleted (GET answers 404) and the summary becomes stale.',
  },
  'fresh.sync.summary': {
    source: 'issue 32 Must show; decisions Knowledge sync (With changes and reindex the summary is rebuilt)',
    behavior:
      'With reindex on, a sync that changed a document rebuilds the summary (its version moves, summary_rebuild true); a sync that changed nothing, or any sync with reindex off, leaves the version where it was.',
  },
  'fresh.sync.in-progress': {
    source: 'decisions Knowledge sync (One sync per agent at a time)',
    behavior:
      'A second POST /agents/{agt}/kb/sync while a sync of the agent runs is 409 sync_in_progress naming the running sync, and creates none.',
  },
  'fresh.sync.event': {
    source: 'decisions Knowledge sync (Event kb.synced, data: the sync)',
    behavior:
      'An endpoint subscribed to kb.synced receives one delivery per finished sync whose data is the sync as GET kb/syncs/{sync} reads it (status succeeded, its lists).',
  },
  'fresh.sync.schedule-spread': {
    source: 'issue 32 (daily and weekly, spread across the period rather than all at midnight)',
    behavior:
      "Each agent's scheduled moment is a hash of its id within the day or the week: a thousand agents fall in every hour of the day and every day of the week, and a sync is due once per period, after the moment, only when nothing fetched the agent's pages since.",
  },
  'fresh.sync.schedule-once': {
    source: 'issue 32 Must show (two instances, the sync running exactly once)',
    engines: ['postgres'],
    behavior:
      'On PostgreSQL, two instances sweeping the same database every second for an agent whose daily sync is due create exactly one sync (trigger schedule) and fetch each page once; later sweeps in the same period create none.',
  },
  'fresh.sync.bounds': {
    source: 'decisions Knowledge sync (same SSRF rules and limits as crawls); Security rules "Limits on hostile work"',
    behavior:
      "A sync fetches only through the crawl's guard and site rule: a sitemap entry or link to another host is never requested nor added, robots.txt still applies, and a sitemap of 50,000 entries is read without holding the process (GET /health answers within 1 s meanwhile).",
  },
  // Issue 34 (MCP at the current revision: tools)
  'mcp.tools.annotations': {
    source: 'spec decisions "MCP, current revision"; issue 34 Annotations',
    behavior:
      "Every tool in tools/list has a title and the four annotations readOnlyHint, destructiveHint, idempotentHint and openWorldHint (booleans derived from what the tool does), and the list is in the catalogue's declared order on every call and in every process.",
  },
  'mcp.tools.input-errors': {
    source: 'spec decisions "MCP, current revision"; issue 34 Tool errors; MCP 2025-11-25 tools "Error Handling"',
    behavior:
      'A tool input that fails validation (wrong type, out of range, malformed id, missing, unknown) is a tool result with isError: true whose text and structuredContent.error.field name the tool input (agent_id, not the route parameter agt) and the rule, with no side effect; an unknown tool stays a JSON-RPC error.',
  },
  'mcp.step-up': {
    source:
      'spec decisions "MCP, current revision"; issue 34 Step-up; MCP 2025-11-25 authorization "Scope Challenge Handling"',
    behavior:
      'An OAuth token calling a tool whose scope it lacks gets HTTP 403 with WWW-Authenticate: Bearer error="insufficient_scope", scope="<the token\'s scopes plus the missing one>", resource_metadata="<protected-resource metadata URL>"; the SDK client re-authorizes with that scope, consent grants it, and the retried call succeeds. A personal key gets the insufficient_scope tool error instead.',
  },
  'mcp.inspector': {
    source: 'issue 34 Must show (the MCP Inspector CLI lists the tools with their annotations)',
    behavior:
      'The MCP Inspector in its --cli mode (test/helpers/inspector.ts), with a bearer header, lists every tool with its title and four annotations.',
  },
  'mcp.revisions': {
    source: 'spec decisions "MCP, current revision" (keep every protocol revision the SDK speaks)',
    behavior:
      'initialize with each protocol revision the installed SDK supports answers that revision, and a tools/list carrying it as MCP-Protocol-Version works; an unknown revision is answered with the latest on initialize and 400 as a header.',
  },
  // Operations: tracing (issue 33)
  'ops.tracing.request-span': {
    source: 'decisions Tracing; issue 33 Must show',
    behavior:
      'With OTEL_EXPORTER_OTLP_ENDPOINT set, every request is a server span named `METHOD <route template>` (never a raw path or query) with method, route and status, exported over OTLP/HTTP; an incoming W3C traceparent is continued (same trace id, the incoming span as parent).',
  },
  'ops.tracing.chat-turn': {
    source: 'decisions Tracing; issue 33 Must show',
    behavior:
      "A chat turn's claim, engine, each tool it runs and persist are child spans of the request's server span (the tool under the engine, named by its capability).",
  },
  'ops.tracing.voice-stages': {
    source: 'decisions Tracing; issue 33 Must show',
    behavior:
      "A simulated call's voice turn is a span in the trace of the request that started the call, with a child span per stage (end of speech, transcription, first token, synthesis first byte, first audio) on the wall clock; the speech provider is sent the call's traceparent.",
  },
  'ops.tracing.jobs': {
    source: 'decisions Tracing',
    behavior: 'Each job run is a consumer span named `job <queue>`, with the queue and its retry count.',
  },
  'ops.tracing.webhook-traceparent': {
    source: 'decisions Tracing; issue 33 Must show',
    behavior:
      "Each webhook attempt is a client span and its POST carries a W3C traceparent naming that span; a test delivery made in a request continues the request's trace.",
  },
  'ops.tracing.no-pii': {
    source: 'decisions Tracing ("No PII or secrets in attributes"); issue 33',
    behavior:
      "No span attribute or span name of a full run (chat with a tool, a call, webhooks, jobs) carries an API key, the master key, a provider key, the visitor's or caller's words, an e-mail address, a phone number or a query string; every attribute key is on the allowlist.",
  },
  'openapi.responses': {
    source: 'issue 37 (decisions "Issue 37: OpenAPI responses")',
    behavior:
      'Every 2xx response of /v1/openapi.json describes the whole answer: the resource with every documented key required, nullable where the contract allows null, enums, date-time timestamps and id patterns; the list envelope (data, pagination {limit, has_more, next_cursor}, meta) or meta on a single object; resources several operations return are shared components ($ref). No list lacks pagination, no response property is the empty schema, no *_at string lacks format date-time (scripts/openapi-counts.mjs: 0 each).',
  },
  'openapi.parameters': {
    source: 'issue 37',
    behavior:
      'Query parameters are typed as what they mean: limit and other counts integer (with bounds and a numeric default), the true/false words boolean, timestamps date-time, enum filters enums, and a repeatable key an array of its scalar (form, explode).',
  },
  'openapi.conformance': {
    source: 'issue 37',
    behavior:
      "The test helpers check every response the suite receives against the served document (the operation's schema for that status, ajv with formats): an undocumented 2xx status or a body the schema refuses fails the test.",
  },
  'openapi.generated-client': {
    source: 'issue 37',
    behavior:
      'The served document passes @apidevtools/swagger-parser and the @redocly/openapi-core recommended rules with 0 errors; types generated by openapi-typescript compile a strict openapi-fetch client (user, key, build, chat, a cursor page, a webhook delivery) that then runs against the server.',
  },
  'ops.tracing.off-by-default': {
    source: 'decisions Tracing',
    behavior:
      'Without OTEL_EXPORTER_OTLP_ENDPOINT no span is exported (even with the per-signal OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set) and no traceparent is sent to webhook receivers.',
  },
  'ops.idle-wakeups': {
    source: 'issue 36; decisions Issue 36: idle wake-ups',
    behavior:
      'An idle server (no requests, no job due) wakes on timers a few times in 10 s, not on polls: no loop of its own runs more often than every 5 s once the start-up windows have passed (the operator config poll), the webhook pump is woken by the outbox NOTIFY, the audit writer only while rows wait, and on PGlite the heartbeat and the reconciliation slow down once the process is alone; no statement outside the job queue runs more than twice in 10 s.',
  },
  'jobs.cron': {
    source: 'issue 36; decisions Issue 36: idle, the minute sweeps',
    behavior:
      "The jobs' schedules (five-field cron, UTC) are evaluated by the service, one timer for the next due minute slot: each job is sent once in each slot it is due, after a start from the next slot on; with several instances on one PostgreSQL database exactly one instance sends a slot (a conditional UPDATE of the queue schema's slot), and slots no instance sent are sent by the next claim, back to five minutes.",
  },
  'jobs.local-sweeps': {
    source: 'issue 36; decisions Issue 36: idle, the minute sweeps',
    behavior:
      'On the embedded database a scheduled job (a sweep) runs in the process instead of through the queue: at start when it asks to, in each due slot, and a run it sends to start later runs then, with one run at a time and at most one waiting; on PostgreSQL it goes through the queue as before.',
  },
} satisfies Record<string, Requirement>

export type RequirementId = keyof typeof requirements

/** Declares which contract rules a test proves; an unknown id fails the test at once. */
export function verifies(...ids: RequirementId[]): void {
  for (const id of ids) if (!(id in requirements)) throw new Error(`unknown requirement id: ${id}`)
  recordCitations(ids)
}
