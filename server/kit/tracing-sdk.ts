// The OpenTelemetry SDK, loaded by the composition root (server/runtime.ts) with a dynamic import only when
// OTEL_EXPORTER_OTLP_ENDPOINT is set, so a process with tracing off never loads it (decisions "Tracing").
// Spans are batched (OTEL_BSP_* apply) and sent as OTLP/HTTP JSON to <endpoint>/v1/traces; the exporter reads
// the other standard variables itself (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION, the per-signal
// _TRACES_ forms). Context travels in AsyncLocalStorage and across services as W3C traceparent.
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions'
import { markTracingOn } from './tracing'

/** Registers the provider; the returned function flushes the spans still batched and stops exporting. */
export function startTracing(opts: { serviceName: string }): () => Promise<void> {
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over the default name.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: opts.serviceName }))
    .merge(detectResources({ detectors: [envDetector] }))
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  })
  provider.register({
    contextManager: new AsyncLocalStorageContextManager(),
    propagator: new W3CTraceContextPropagator(),
  })
  markTracingOn()
  return () => provider.shutdown()
}
