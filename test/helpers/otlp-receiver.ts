// A loopback OTLP/HTTP trace receiver for the tracing tests and the bench: accepts POST /v1/traces in the
// JSON encoding the exporter sends (gzip or not, per OTEL_EXPORTER_OTLP_COMPRESSION) and flattens every
// resourceSpans → scopeSpans → spans into one list, with attributes as a plain object.
import { createServer, type Server } from 'node:http'
import { gunzipSync } from 'node:zlib'

export interface ReceivedSpan {
  traceId: string
  spanId: string
  /** '' for a root span. */
  parentSpanId: string
  name: string
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number
  startMs: number
  endMs: number
  attributes: Record<string, string | number | boolean>
  /** 2 is error. */
  status: number
  resource: Record<string, string | number | boolean>
}

export interface OtlpReceiver {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT takes (the exporter appends /v1/traces). */
  url: string
  spans: ReceivedSpan[]
  /** POST /v1/traces requests received. */
  posts: number
  close(): Promise<void>
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean }
const plain = (v: AnyValue): string | number | boolean =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? v.boolValue ?? ''))
const attrs = (list: { key: string; value: AnyValue }[] | undefined) =>
  Object.fromEntries((list ?? []).map((a) => [a.key, plain(a.value)]))
// Times are nanoseconds since the epoch, as decimal strings in the JSON encoding.
const ms = (nanos: string | number) => Number(BigInt(nanos) / 1000n) / 1000

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = []
  const r: OtlpReceiver = { url: '', spans, posts: 0, close: async () => {} }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end()
        return
      }
      r.posts++
      let raw = Buffer.concat(chunks)
      if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw)
      const doc = JSON.parse(raw.toString('utf8'))
      for (const rs of doc.resourceSpans ?? []) {
        const resource = attrs(rs.resource?.attributes)
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              kind: s.kind,
              startMs: ms(s.startTimeUnixNano),
              endMs: ms(s.endTimeUnixNano),
              attributes: attrs(s.attributes),
              status: s.status?.code ?? 0,
              resource,
            })
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  r.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  r.close = async () => {
    server.closeAllConnections()
    await new Promise((ok) => server.close(ok))
  }
  return r
}
