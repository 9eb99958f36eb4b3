// The "Running in production" page of the reference (/v1/docs/pages/running-in-production.md): the process, the
// database, secrets, blobs, several instances, shutdown and health, then scraping /metrics and tracing over OTLP
// (issue 33). Names come from server/config.ts and docs/decisions.md; test/unit/ops.test.ts holds every SVC_*
// variable named here to server/config.ts, and the Prometheus example here to ops/prometheus.yml.
export const PRODUCTION_GUIDE_TITLE = 'Running in production'

export const PRODUCTION_GUIDE = `How to run the service for customers: the process, the database, secrets, storage, several instances, shutdown
and health, then the two things a dashboard and an on-call engineer need: Prometheus metrics and OpenTelemetry
traces. The example files named here are in the repository's \`ops/\` folder.

## The process

Build once, then ship \`.output/\` (self-contained: it needs Node 20.19 or later, not the repository's \`node_modules\`):

\`\`\`sh
npm ci && npx nitropack build
SVC_ENV=production HOST=0.0.0.0 PORT=3000 \\
  DATABASE_URL=postgres://svc:…@db.internal:5432/svc \\
  SVC_MASTER_KEY=… SVC_SECRET=… SVC_PUBLIC_URL=https://api.example.com \\
  node .output/server/index.mjs
\`\`\`

- \`SVC_ENV=production\` is the production switch (not \`NODE_ENV\`, which the build fixes). In production the
  process refuses to start without \`SVC_MASTER_KEY\` and \`SVC_SECRET\`; outside it they are generated into \`SVC_DATA_DIR\`.
- \`HOST\` defaults to \`127.0.0.1\`: set \`HOST=0.0.0.0\` (or an interface) for a balancer or Prometheus to reach it.
- \`SVC_PUBLIC_URL\` is the origin clients see (OAuth metadata, login links, recording URLs, embed snippets, the
  media-stream URLs telephony providers connect to). Behind a proxy, list the proxy's addresses in
  \`SVC_TRUSTED_PROXIES\` (default \`127.0.0.0/8,::1\`) so \`X-Forwarded-For\` and \`X-Forwarded-Proto\` are believed from it alone.
- Providers: \`SVC_CHAT_ENGINE\` (\`local\` or \`openai\` with \`OPENAI_API_KEY\`, \`OPENAI_BASE_URL\`), \`SVC_TELEPHONY\`
  (\`simulated\` or \`twilio\` with \`TWILIO_ACCOUNT_SID\`, \`TWILIO_AUTH_TOKEN\`), \`SVC_SPEECH\` (or \`SVC_STT\` and \`SVC_TTS\`
  apart: \`simulated\`, \`deepgram\` with \`DEEPGRAM_API_KEY\`, \`openai\` with \`SPEECH_API_KEY\`), \`SVC_MAIL\` (\`outbox\` or \`smtp\` with \`SMTP_URL\`,
  \`SMTP_FROM\`). An unknown name stops the boot.
- A bad value of any \`SVC_*\` variable stops the boot with a message naming it: a process that starts is configured.

## The database

- \`DATABASE_URL=postgres://…\`: PostgreSQL, for production and for any deployment of more than one process.
- Unset: the embedded database (PGlite, real PostgreSQL in the process) under \`SVC_DATA_DIR\` (default \`.data\`).
  One process only, one transaction at a time: for trying the service, not for customers.
- Migrations run on boot: every instance applies what is missing, under an advisory lock, one transaction per
  file, recorded with a checksum in \`schema_migrations\` (\`GET /v1/admin/migrations\` lists them). A rolling
  deploy needs no separate migration step; an edited applied migration stops the boot.
- Behind PgBouncer in transaction mode set \`SVC_PG_PREPARE=false\` (no prepared statements).
- The job queue (pg-boss) lives in the same database, in the schema \`SVC_QUEUE_SCHEMA\` (default \`pgboss\`): every
  instance of one deployment uses the same schema; another deployment on the same database uses its own.

## Secrets and the master key

- \`SVC_MASTER_KEY\`: \`svc_mk_live_\` and at least 48 characters. It is the operator's credential (every route,
  every account); it is never stored in the database, so it is only in your secret store. Generate one with
  \`echo "svc_mk_live_$(openssl rand -hex 32)"\`. Rotating it is a redeploy with the new value.
- \`SVC_SECRET\`: at least 32 characters (\`openssl rand -hex 32\`). It signs list cursors, media and visitor tokens
  and encrypts webhook signing secrets at rest: every instance must have the same one, and changing it
  invalidates cursors and tokens and makes stored webhook secrets unreadable.
- Provider credentials (\`OPENAI_API_KEY\`, \`TWILIO_AUTH_TOKEN\`, \`DEEPGRAM_API_KEY\`, \`SMTP_URL\`…) and
  \`SVC_METRICS_TOKEN\` come from the same secret store. Give Prometheus \`SVC_METRICS_TOKEN\`, never the master key.

## Blob storage

Uploaded originals and call recordings are blobs; nothing else is.

- \`SVC_BLOB_DRIVER=fs\` (default): files under \`SVC_BLOB_DIR\` (default \`<SVC_DATA_DIR>/blobs\`). Instances sharing
  one database must share this directory (a shared mount): any of them may run the ingest of another's upload.
- \`SVC_BLOB_DRIVER=s3\` with \`SVC_BLOB_URL=https://KEY_ID:SECRET@s3.example.com/bucket?region=eu-west-1\`: any
  S3-compatible store, path-style, key id and secret URL-encoded. A URL that is missing or unusable stops the boot.
- \`SVC_BLOB_DRIVER=<name>\`: a plugin package's blob provider (\`SVC_PLUGINS\`; see Writing a plugin), opened at boot
  with \`SVC_BLOB_URL\` and \`SVC_BLOB_DIR\`. A store that does not open stops the boot with one line.

## Several instances

Run as many processes as you need on one PostgreSQL, behind any HTTP balancer:

- the same \`SVC_SECRET\`, \`SVC_MASTER_KEY\`, \`SVC_QUEUE_SCHEMA\` and blob store on each;
- \`REDIS_URL=redis://…\` so rate limits, failed-login limits and cache invalidations are shared; without it each
  instance counts on its own (a budget becomes N times the figure). If Redis goes away, limiters fall back to the
  instance's memory rather than failing requests;
- jobs, webhook deliveries, campaign dialling and turn claims are coordinated in PostgreSQL; nothing needs sticky
  sessions. A voice WebSocket stays on the instance that accepted it until the call ends;
- an instance that dies has its calls reconciled by the others after \`SVC_CALL_STALE_SECONDS\` (default 15).

## Graceful shutdown and health

- \`GET /v1/health\` is public and unmetered: 200 with \`status\` \`ok\` or \`degraded\` (the job queue reported an error
  in the last minute), 503 \`down\` when the database does not answer within a second, or while the process drains.
  Point the balancer's health check (and a Kubernetes readiness probe) at it.
- On SIGTERM (or SIGINT) the process drains: health answers 503 at once, new voice sessions are refused (503
  \`service_unavailable\`, \`Retry-After: 1\`), it waits \`SVC_SHUTDOWN_DELAY_SECONDS\` (default 0; set it to the
  balancer's health interval, and to at least 1 even when the balancer deregisters before signalling), then for live
  calls and voice chats to end (at most \`SVC_SHUTDOWN_TIMEOUT_SECONDS\`, default 20), then answers the requests
  in flight (at most \`NITRO_SHUTDOWN_TIMEOUT\`, default the same 20 s), releases its jobs, webhook leases and calls
  to the other instances, and exits 0. A second signal is ignored; SIGKILL cuts it short.
- Give the orchestrator room for the worst case, delay + sessions + requests + about 8 s, e.g. on Kubernetes with
  \`SVC_SHUTDOWN_DELAY_SECONDS=5\`:

\`\`\`yaml
terminationGracePeriodSeconds: 60
readinessProbe:
  httpGet: { path: /v1/health, port: 3000 }
  periodSeconds: 5
  failureThreshold: 1
\`\`\`

## Scraping metrics

\`GET /metrics\` on the origin root (not under \`/v1\`) answers the Prometheus text exposition format. It takes
\`Authorization: Bearer <SVC_METRICS_TOKEN>\` (a value you choose and set on every instance, 32 to 512 characters
without spaces, e.g. \`openssl rand -hex 32\`; a shorter one stops the boot) or the master key. Anything else is 401,
and failed attempts count against the per-IP limit of failed authentications (429 past 20 a minute). The token
opens nothing but \`/metrics\`.

\`\`\`sh
curl -sS -H "Authorization: Bearer $SVC_METRICS_TOKEN" http://10.0.0.11:3000/metrics | grep '^svc_'
\`\`\`

Each process has its own registry: scrape every instance directly, never through the balancer. Labels are
bounded: a route is its template (\`/v1/conversations/:conv/messages\`, the \`/api/v1\` alias counted under it), a
path that matched no route is \`(unmatched)\`, never the path; no tenant or account id is ever a label.

| Series | Type, labels | What it tells you |
|---|---|---|
| \`svc_http_requests_total\` | counter; \`method\`, \`route\`, \`status\` | traffic and errors per route: \`rate()\` for requests per second, the 5xx share for availability |
| \`svc_http_request_duration_seconds\` | histogram; \`method\`, \`route\` | request latency per route (p50, p95, p99 with \`histogram_quantile\`) |
| \`svc_chat_turn_duration_seconds\` | histogram; \`surface\`, \`engine\` | one visitor message to its stored answer, tools included, per surface (\`chat\` for the API and the widget, \`phone\`, \`voice_chat\`) and chat engine |
| \`svc_voice_turn_latency_seconds\` | histogram; \`stage\` | the voice turn by stage: \`endpoint\` (end of speech detected), \`stt\` (transcript), \`llm_first_token\`, \`tts_first_byte\`, \`first_audio\` (end of the caller's speech to the first audio sent: what the caller waits) |
| \`svc_jobs_total\` | counter; \`queue\`, \`result\` | finished background jobs (builds, ingests, crawls, summaries, sweeps…) per queue, \`completed\` or \`failed\` |
| \`svc_webhook_deliveries_total\` | counter; \`result\` | webhook delivery attempts by outcome (\`succeeded\`, \`retrying\`, \`exhausted\`); failures are your customers' receivers, retried on the schedule |
| \`svc_calls_active\` | gauge | calls with a live media session on this instance |
| \`svc_db_pool_connections\` | gauge; \`state\` | this instance's database connections: on PostgreSQL as \`pg_stat_activity\` sees them (\`active\`, \`idle\`, \`idle_in_transaction\`) and \`max\`, the pool's size (10); \`active\` near \`max\` all the time means the pool is the bottleneck |
| \`process_*\`, \`nodejs_*\` | prom-client's defaults | CPU (\`process_cpu_seconds_total\`), memory (\`process_resident_memory_bytes\`, \`nodejs_heap_size_used_bytes\`), event-loop lag (\`nodejs_eventloop_lag_p99_seconds\`), handles, GC |

Prometheus (\`ops/prometheus.yml\`), with the token in a file Prometheus can read:

\`\`\`yaml
scrape_configs:
  - job_name: svc
    metrics_path: /metrics
    scrape_interval: 15s
    authorization:
      type: Bearer
      credentials_file: /etc/prometheus/secrets/svc-metrics-token
    static_configs:
      - targets: ['svc-1.internal:3000', 'svc-2.internal:3000']
\`\`\`

Queries worth an alert:

\`\`\`
# more than 1 % of responses are 5xx
sum(rate(svc_http_requests_total{status=~"5.."}[5m])) / sum(rate(svc_http_requests_total[5m])) > 0.01
# callers wait more than 2 s for the agent's first audio (p95)
histogram_quantile(0.95, sum by (le) (rate(svc_voice_turn_latency_seconds_bucket{stage="first_audio"}[5m]))) > 2
# a queue fails more than 10 % of its jobs
sum by (queue) (rate(svc_jobs_total{result="failed"}[15m])) / sum by (queue) (rate(svc_jobs_total[15m])) > 0.1
\`\`\`

The dashboard: in Grafana, Dashboards → New → Import, upload \`ops/grafana/svc-overview.json\` and pick your
Prometheus data source ("svc overview": HTTP rate, 5xx ratio and latency by route, chat turn p95, voice latency by
stage with the first-audio p95, jobs, webhooks, active calls, the database pool, CPU, memory, heap, event-loop lag).
Its \`job\`, \`instance\` and \`route\` variables narrow every panel. \`ops/README.md\` shows the import over Grafana's API.

## Tracing

Tracing is off until \`OTEL_EXPORTER_OTLP_ENDPOINT\` is set; then every instance sends its spans over OTLP/HTTP
(JSON) with the OpenTelemetry SDK. The standard variables act as the SDK defines them:

| Variable | Effect |
|---|---|
| \`OTEL_EXPORTER_OTLP_ENDPOINT\` | the collector's base URL, e.g. \`http://otel-collector:4318\` (spans go to \`/v1/traces\` under it) |
| \`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT\` | the full traces URL instead, used as given; it does not turn tracing on by itself (set \`OTEL_EXPORTER_OTLP_ENDPOINT\` too) |
| \`OTEL_EXPORTER_OTLP_HEADERS\` | headers for the collector, e.g. \`authorization=Bearer%20…\` (comma-separated \`key=value\`, values URL-encoded) |
| \`OTEL_SERVICE_NAME\` | the \`service.name\` of every span; default \`svc\` |
| \`OTEL_TRACES_SAMPLER\`, \`OTEL_TRACES_SAMPLER_ARG\` | sampling, e.g. \`parentbased_traceidratio\` and \`0.1\` for 10 % of new traces; the default is \`parentbased_always_on\` (every trace, and a caller's decision is kept) |

\`\`\`sh
OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-collector:4318 \\
OTEL_SERVICE_NAME=svc \\
OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=0.2 \\
  node .output/server/index.mjs
\`\`\`

What a trace holds:

- a server span for each request, named by its route template (\`POST /v1/conversations/:conv/messages\`), never
  by the raw path;
- inside a chat turn: the claim, the engine's answer, each tool the agent calls, and the persist;
- inside a call: each voice turn's stages, end of speech, transcription, the engine's first token, synthesis's
  first byte and the first audio sent, the same stages as \`svc_voice_turn_latency_seconds\` and a turn's
  \`latency_breakdown\`;
- background jobs, webhook deliveries, and calls to providers (chat engine, speech, telephony) as their own spans.

\`traceparent\` flows both ways (W3C Trace Context): a request that carries one continues the caller's trace, so
your gateway's or your client's span is the parent; webhook deliveries and provider calls send one, so a receiver
that traces sees the service's span as the parent of its own.

\`\`\`sh
curl -sS -H "Authorization: Bearer $KEY" -H 'traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' \\
  -H 'Content-Type: application/json' -d '{"text":"hello"}' https://api.example.com/v1/conversations/$CONV/messages
\`\`\`

Pointing it at a collector: \`ops/otel-collector.yaml\` receives OTLP/HTTP on 4318 and forwards over OTLP to Tempo
or Jaeger (both take OTLP natively); set \`OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-collector:4318\` on the instances.
A backend that takes OTLP/HTTP itself (Jaeger on 4318, Tempo, a vendor's endpoint with \`OTEL_EXPORTER_OTLP_HEADERS\`)
needs no collector.

What is never recorded: no message text, transcript, prompt, tool argument or result, e-mail address, phone
number or name of a caller; no credential, token, key, webhook secret or signature; no query string. Off (the
default), nothing is exported and spans are OpenTelemetry's no-ops, which cost nothing measurable.
`
