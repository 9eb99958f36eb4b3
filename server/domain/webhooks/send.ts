// One signed POST to a receiver, through the crawler's safe fetch: the URL and every resolved address
// pass the url guard at send time and the connection goes to the checked address, so a DNS answer
// that changes after the endpoint was saved (rebinding) cannot reach a private host.
import { ApiError } from '~/lib/errors'
import { FetchError, safeFetch } from '~/domain/kb/safe-fetch'
import { clientSpan } from '~/kit/tracing'
import { signPayload } from './verify'

/** decisions "Retries": a 2xx within 10 s. */
export const DELIVERY_TIMEOUT_MS = 10_000

export interface SendResult {
  ok: boolean
  statusCode: number | null
  latencyMs: number
  error: string | null
}

export function signatureHeaders(
  secrets: string[],
  body: string,
  deliveryId: string,
  eventType: string,
  now = Date.now(),
) {
  const timestamp = Math.floor(now / 1000)
  return {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'x-svc-timestamp': String(timestamp),
    // New secret first (decisions "Webhook signature").
    'x-svc-signature': secrets.map((s) => `v1=${signPayload(s, timestamp, body)}`).join(','),
    'x-svc-event': eventType,
    'x-svc-delivery': deliveryId,
  }
}

export async function postSigned(opts: {
  url: string
  secrets: string[]
  body: string
  deliveryId: string
  eventType: string
  allowPrivateHosts: readonly string[]
  timeoutMs?: number
}): Promise<SendResult> {
  const started = performance.now()
  const latency = () => Math.round(performance.now() - started)
  try {
    // decisions "Tracing": a client span per attempt, its traceparent sent with the POST; the URL is not named.
    const res = await clientSpan(
      `webhook ${opts.eventType}`,
      { 'svc.webhook.event': opts.eventType },
      (trace) =>
        safeFetch(opts.url, {
          method: 'POST',
          body: opts.body,
          headers: { ...signatureHeaders(opts.secrets, opts.body, opts.deliveryId, opts.eventType), ...trace },
          allowPrivateHosts: opts.allowPrivateHosts,
          timeoutMs: opts.timeoutMs ?? DELIVERY_TIMEOUT_MS,
          // The answer's body is not used; cap it so a receiver cannot stream megabytes at us.
          maxBytes: 1024 * 1024,
          userAgent: 'SvcWebhooks/1.0',
          accept: '*/*',
        }),
      (r) => r.status,
    )
    return { ok: res.status >= 200 && res.status < 300, statusCode: res.status, latencyMs: latency(), error: null }
  } catch (e) {
    if (e instanceof FetchError) return { ok: false, statusCode: e.status, latencyMs: latency(), error: e.message }
    if (e instanceof ApiError)
      return { ok: false, statusCode: null, latencyMs: latency(), error: `Refused: ${e.message}` }
    return { ok: false, statusCode: null, latencyMs: latency(), error: e instanceof Error ? e.message : String(e) }
  }
}
