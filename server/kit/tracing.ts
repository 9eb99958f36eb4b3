// OpenTelemetry spans for the service (decisions "Tracing"). The tracer comes from @opentelemetry/api: until
// the SDK registers a provider (kit/tracing-sdk.ts, loaded at boot only when OTEL_EXPORTER_OTLP_ENDPOINT is
// set) it is the API's no-op, and the helpers below skip even that while tracing is off, so a hot path pays
// one boolean test.
//
// Attributes pass an allowlist (ATTRIBUTE_KEYS): a key not on it is dropped, so no caller can put a visitor's
// words, an address, a phone number, a URL or a credential on a span by accident (decisions "Tracing").
// Errors set the span's status and `error.type` (the error's class), never its message: provider and
// telephony messages can name numbers and URLs.
import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api'
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
} from '@opentelemetry/semantic-conventions'

export { SpanKind }
export type { Context, Span }

/** The only attribute keys a span may carry; each holds a template, a name, a count, a status or an opaque id. */
export const ATTRIBUTE_KEYS = new Set<string>([
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_ROUTE,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_ERROR_TYPE,
  /** conv_… ids: opaque, and what an operator searches by. */
  'svc.conversation.id',
  /** api, widget, phone_inbound, phone_outbound, voice_chat. */
  'svc.channel',
  /** A capability's registered name (create_lead, transfer_call…), and whether it succeeded. */
  'svc.tool.name',
  'svc.tool.ok',
  'svc.turn.tool_calls',
  'svc.turn.unanswered',
  'svc.turn.interrupted',
  /** A job kind, its retry count. */
  'svc.job.queue',
  'svc.job.retry',
  /** An event type (conversation.ended…). */
  'svc.webhook.event',
  /** A provider's registered name and the operation asked of it (complete, stream, transcribe, placeCall…). */
  'svc.provider',
  'svc.provider.operation',
  /** A voice-turn stage's name and duration as persisted in latency_breakdown. */
  'svc.voice.stage',
  'svc.voice.latency_ms',
])

let tracer = trace.getTracer('svc')
let on = false

/**
 * Called once by the SDK at boot (kit/tracing-sdk.ts), after it registered its provider. The tracer is taken
 * again from the registered global: the bundle may hold its own copy of the API, whose proxy tracer taken at
 * import would never be pointed at a provider registered through the SDK's copy.
 */
export function markTracingOn() {
  tracer = trace.getTracer('svc')
  on = true
}

export type SpanAttrs = Record<string, string | number | boolean | null | undefined>

function allowed(attrs: SpanAttrs | undefined): Attributes {
  const out: Attributes = {}
  if (attrs)
    for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null && ATTRIBUTE_KEYS.has(k)) out[k] = v
  return out
}

/** Sets allowed attributes on a span (null or undefined values are skipped). */
export function setAttrs(span: Span | undefined, attrs: SpanAttrs) {
  if (span?.isRecording()) span.setAttributes(allowed(attrs))
}

function failed(span: Span, err: unknown) {
  span.setStatus({ code: SpanStatusCode.ERROR })
  span.setAttribute(ATTR_ERROR_TYPE, err instanceof Error ? err.constructor.name || 'Error' : typeof err)
}

/**
 * Runs fn inside a span that is the active one for everything fn awaits (child spans, injected headers).
 * A throw marks the span failed and passes through. With tracing off, fn runs as is.
 */
export function inSpan<T>(
  name: string,
  attrs: SpanAttrs | undefined,
  fn: (span?: Span) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  if (!on) return fn()
  return tracer.startActiveSpan(name, { kind, attributes: allowed(attrs) }, async (span) => {
    try {
      return await fn(span)
    } catch (err) {
      failed(span, err)
      throw err
    } finally {
      span.end()
    }
  })
}

/**
 * An outgoing call (a provider, a webhook receiver) as a client span. fn gets the headers that carry the
 * span's W3C `traceparent` (empty while tracing is off) to send with its request; `statusOf` reads the HTTP
 * status from the answer when there is one.
 */
export function clientSpan<T>(
  name: string,
  attrs: SpanAttrs,
  fn: (traceHeaders: Record<string, string>) => Promise<T>,
  statusOf?: (result: T) => number | undefined,
): Promise<T> {
  if (!on) return fn({})
  return inSpan(
    name,
    attrs,
    async (span) => {
      const result = await fn(injectTraceHeaders({}))
      const status = statusOf?.(result)
      if (status !== undefined) {
        setAttrs(span, { [ATTR_HTTP_RESPONSE_STATUS_CODE]: status })
        if (status >= 400) span?.setStatus({ code: SpanStatusCode.ERROR })
      }
      return result
    },
    SpanKind.CLIENT,
  )
}

/** The attributes of a provider's client span. */
export const providerCall = (provider: string, operation: string): SpanAttrs => ({
  'svc.provider': provider,
  'svc.provider.operation': operation,
})

/** Adds the active span's `traceparent` (and `tracestate`) to headers, in place; returns them. */
export function injectTraceHeaders<H extends Record<string, string>>(headers: H): H {
  if (on) propagation.inject(context.active(), headers)
  return headers
}

/** The active context, to parent spans that are recorded later (a voice call's turns). */
export const activeContext = (): Context => (on ? context.active() : ROOT_CONTEXT)

/**
 * The server span of one request, continuing an incoming `traceparent`. `run` executes the request inside
 * it; `end` names it `METHOD <route template>` (the template is only known once the router has matched) and
 * records the status.
 */
export function serverSpan(method: string, headers: Record<string, string | string[] | undefined>) {
  const parent = propagation.extract(ROOT_CONTEXT, headers)
  const span = tracer.startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: allowed({ [ATTR_HTTP_REQUEST_METHOD]: method }) },
    parent,
  )
  const ctx = trace.setSpan(parent, span)
  return {
    run: <T>(fn: () => T): T => context.with(ctx, fn),
    end(route: string | undefined, status: number) {
      if (route) span.updateName(`${method} ${route}`)
      span.setAttributes(allowed({ [ATTR_HTTP_ROUTE]: route, [ATTR_HTTP_RESPONSE_STATUS_CODE]: status }))
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
      span.end()
    },
  }
}

/** Milliseconds of performance.now() as epoch milliseconds (span times are on the wall clock). */
const epoch = (perfMs: number) => performance.timeOrigin + perfMs

/**
 * A span whose start and end were recorded earlier with performance.now() (a voice turn's stages). Returns
 * the context with it, to parent further recorded spans (a child may be recorded after its parent ended); a
 * stage without both times is left out.
 */
export function recordedSpan(
  name: string,
  attrs: SpanAttrs | undefined,
  startPerf: number | null,
  endPerf: number | null,
  parent: Context,
): Context {
  if (!on || startPerf === null || endPerf === null) return parent
  const span = tracer.startSpan(name, { attributes: allowed(attrs), startTime: epoch(startPerf) }, parent)
  span.end(epoch(Math.max(startPerf, endPerf)))
  return trace.setSpan(parent, span)
}
