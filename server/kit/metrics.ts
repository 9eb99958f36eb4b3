// The process's Prometheus series (decisions "Prometheus metrics"): one prom-client registry per process,
// scraped at GET /metrics. Labels are closed sets only (route templates, methods, status codes, stages,
// queue names, results): never a tenant id, a resource id or a raw path, so the series count stays bounded
// whatever the traffic. Recording is a counter increment or a bucket search, cheap enough for every request.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

export const registry = new Registry()
// The event-loop lag histogram samples every 50 ms, not prom-client's 10 ms: its libuv timer woke an idle process
// 100 times a second (unseen by JS timers and profiles; decisions "Issue 36: idle, the minute sweeps"). A block
// of 50 ms or more, where the dashboard says voice starts to stutter, is still always recorded.
collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 50 })

// Buckets per series, from what each measures: API requests are mostly milliseconds with a tail of seconds
// (builds, imports); a chat turn is an engine round trip (tenths of a second to tens of seconds); a voice
// stage is tens to hundreds of milliseconds, and the whole answer a caller waits for is about a second.
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
const TURN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60]
const VOICE_BUCKETS = [0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 8]

const httpRequests = new Counter({
  name: 'svc_http_requests_total',
  help: 'HTTP requests answered, by method, route template and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
})
const httpDuration = new Histogram({
  name: 'svc_http_request_duration_seconds',
  help: 'Time from a request reaching the server to its response finishing, by method and route template.',
  labelNames: ['method', 'route'] as const,
  buckets: REQUEST_BUCKETS,
  registers: [registry],
})
const chatTurn = new Histogram({
  name: 'svc_chat_turn_duration_seconds',
  help: 'A chat turn from its claim to its written answer (text turns), or the engine answer of a voice turn, by surface and engine.',
  labelNames: ['surface', 'engine'] as const,
  buckets: TURN_BUCKETS,
  registers: [registry],
})
const voiceTurn = new Histogram({
  name: 'svc_voice_turn_latency_seconds',
  help: "A voice answer turn's stages: endpoint (end of speech detected), stt, llm_first_token, tts_first_byte, and first_audio (end of the caller's speech to the first frame sent).",
  labelNames: ['stage'] as const,
  buckets: VOICE_BUCKETS,
  registers: [registry],
})
const jobs = new Counter({
  name: 'svc_jobs_total',
  help: 'Background job runs on this process, by queue and result (completed, failed: pg-boss retries a failed run within its limit).',
  labelNames: ['queue', 'result'] as const,
  registers: [registry],
})
const webhookDeliveries = new Counter({
  name: 'svc_webhook_deliveries_total',
  help: 'Webhook delivery attempts made by this process, by result (succeeded, retrying, exhausted).',
  labelNames: ['result'] as const,
  registers: [registry],
})

/** What the process reads when it is scraped: set once at boot by the composition root. */
export interface MetricsSources {
  /** Live call sessions (phone and voice chat) this process runs. */
  callsActive(): number
  /** The database connections of this process by state; null when they cannot be read now. */
  dbPool(): Promise<Record<string, number> | null>
}
let sources: MetricsSources | null = null
export function setMetricsSources(s: MetricsSources) {
  sources = s
}

new Gauge({
  name: 'svc_calls_active',
  help: 'Live call sessions (phone and voice chat) on this process.',
  registers: [registry],
  collect() {
    this.set(sources?.callsActive() ?? 0)
  },
})
const dbPool = new Gauge({
  name: 'svc_db_pool_connections',
  help: "This process's database connections by state (PostgreSQL: as pg_stat_activity reports them; the embedded database: its one connection).",
  labelNames: ['state'] as const,
  registers: [registry],
  async collect() {
    const states = await sources?.dbPool().catch(() => null)
    // A state not seen this time reads 0 rather than its last value.
    dbPool.reset()
    for (const [state, n] of Object.entries(states ?? {})) dbPool.set({ state }, n)
  },
})

/** The label of a request whose path matched no route: never the path itself. */
export const UNMATCHED_ROUTE = '(unmatched)'

export function observeRequest(method: string, route: string, status: number, seconds: number) {
  httpRequests.inc({ method, route, status: String(status) })
  httpDuration.observe({ method, route }, seconds)
}

export function observeChatTurn(surface: string, engine: string, seconds: number) {
  chatTurn.observe({ surface, engine }, seconds)
}

export const VOICE_STAGES = ['endpoint', 'stt', 'llm_first_token', 'tts_first_byte', 'first_audio'] as const
export type VoiceStage = (typeof VOICE_STAGES)[number]

/** A voice turn's measured stages, in milliseconds; a stage that did not happen (null) is not observed. */
export function observeVoiceTurn(stages: Partial<Record<VoiceStage, number | null>>) {
  for (const stage of VOICE_STAGES) {
    const ms = stages[stage]
    if (typeof ms === 'number' && Number.isFinite(ms)) voiceTurn.observe({ stage }, ms / 1000)
  }
}

export function countJob(queue: string, result: 'completed' | 'failed') {
  jobs.inc({ queue, result })
}

export function countWebhookDelivery(result: 'succeeded' | 'retrying' | 'exhausted') {
  webhookDeliveries.inc({ result })
}

/** The exposition text and its content type. */
export async function scrape(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() }
}
