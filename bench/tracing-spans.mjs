#!/usr/bin/env node
// The CPU cost of one span with tracing on, apart from the server (decisions "Tracing"): the SDK as the server
// sets it up (NodeTracerProvider, BatchSpanProcessor, OTLP/HTTP JSON exporter, AsyncLocalStorage context)
// exporting to a loopback receiver in this process, spans started active with three attributes and ended, as
// kit/tracing.ts's inSpan does, flushed every 512 spans (the default batch). Prints CPU µs per span (this process: creation, batching, serialising and
// the receiver's parse: an upper bound), and the cost of the off path (a flag test and the call). Figures
// only. BENCH_SPANS (200,000) calls each. Run with `node bench/tracing-spans.mjs`.
import { createServer } from 'node:http'
import { trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node'

const N = Number(process.env.BENCH_SPANS ?? 200_000)
let received = 0
const http = createServer((req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    for (const rs of JSON.parse(Buffer.concat(chunks).toString('utf8')).resourceSpans ?? [])
      for (const ss of rs.scopeSpans ?? []) received += ss.spans?.length ?? 0
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
  })
})
await new Promise((ok) => http.listen(0, '127.0.0.1', ok))
const url = `http://127.0.0.1:${http.address().port}/v1/traces`

let on = false
const tracer = () => trace.getTracer('svc')
const inSpan = (name, attrs, fn) => {
  if (!on) return fn()
  return tracer().startActiveSpan(name, { attributes: attrs }, async (span) => {
    try {
      return await fn(span)
    } finally {
      span.end()
    }
  })
}
const work = async () => 1
const attrs = { 'svc.conversation.id': 'conv_u123', 'svc.turn.tool_calls': 1, 'svc.turn.unanswered': false }

async function run(label) {
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < N; i++) {
    await inSpan('chat.engine', attrs, work)
    // One export per default batch (512 spans), so every span is sent and none is dropped.
    if (on && i % 512 === 511) await provider.forceFlush()
  }
  const cpu = process.cpuUsage(cpu0)
  return { label, wallMs: performance.now() - t0, cpuUsPerCall: (cpu.user + cpu.system) / N }
}

const direct = await (async () => {
  const cpu0 = process.cpuUsage()
  for (let i = 0; i < N; i++) await work()
  const cpu = process.cpuUsage(cpu0)
  return { label: 'direct call', cpuUsPerCall: (cpu.user + cpu.system) / N }
})()
const provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))] })
const off = await run('tracing off')
provider.register({
  contextManager: new AsyncLocalStorageContextManager(),
  propagator: new W3CTraceContextPropagator(),
})
on = true
const cpu0 = process.cpuUsage()
const onRun = await run('tracing on')
await provider.forceFlush()
const all = process.cpuUsage(cpu0)
onRun.cpuUsPerCall = (all.user + all.system) / N
await provider.shutdown()
http.close()

console.log(`${N} calls each; spans received by the loopback receiver: ${received}`)
for (const r of [direct, off, onRun]) console.log(`${r.label.padEnd(12)} ${r.cpuUsPerCall.toFixed(3)} µs CPU per call`)
console.log(`tracing on costs ${(onRun.cpuUsPerCall - off.cpuUsPerCall).toFixed(1)} µs CPU per span (export included)`)
