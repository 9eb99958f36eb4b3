import { setResponseHeader } from 'h3'
import { defineApiRoute } from '~/http/define-api-route'
import { underFailureLimit } from '~/http/pipeline/guards'
import { assertMayScrape } from '~/domain/platform/metrics'
import { scrape } from '~/kit/metrics'

export default defineApiRoute({
  summary: 'Prometheus metrics',
  description:
    'This process\'s series in the Prometheus text exposition format (decisions "Prometheus metrics"): svc_http_requests_total{method,route,status}, svc_http_request_duration_seconds{method,route}, svc_chat_turn_duration_seconds{surface,engine}, svc_voice_turn_latency_seconds{stage}, svc_jobs_total{queue,result}, svc_webhook_deliveries_total{result}, svc_calls_active, svc_db_pool_connections{state} and the Node.js process defaults. `route` is the route template (e.g. /v1/conversations/:conv/messages), never a raw path; no label carries a tenant or resource id. For the master key or `Authorization: Bearer $SVC_METRICS_TOKEN`; anything else is 401, and failed attempts count against the per-IP limit of failed authentications (429). Each instance answers its own series: scrape every instance.',
  tags: ['Platform'],
  auth: 'public',
  raw: true,
  errors: ['missing_credentials', 'invalid_credentials', 'rate_limited'],
  responses: {
    200: {
      description: 'Prometheus text exposition format, version 0.0.4',
      content: { 'text/plain; version=0.0.4; charset=utf-8': { schema: { type: 'string' } } },
    },
    401: {
      description: '`missing_credentials` or `invalid_credentials`',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    },
    429: {
      description: '`rate_limited`: too many failed attempts from this IP address',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    },
  },
  async handler({ event, runtime }) {
    await underFailureLimit(event, runtime, async () =>
      assertMayScrape(event.headers.get('authorization') ?? undefined, runtime.config),
    )
    const { contentType, body } = await scrape()
    setResponseHeader(event, 'Content-Type', contentType)
    return body
  },
})
