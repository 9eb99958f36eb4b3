// The operations files of issue 33 (ops/) and the "Running in production" guide, checked as files: the
// dashboard's PromQL against the series the service exports, the example configs as YAML, the guide's
// variable names against what the configuration and the OpenTelemetry SDK actually read.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { collectDefaultMetrics, Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { parse as parseYaml, parseAllDocuments } from 'yaml'
import { PRODUCTION_GUIDE } from '~/domain/platform/production-guide'
import { verifies } from '../requirements'

const ROOT = resolve(__dirname, '../..')
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')

type Kind = 'counter' | 'gauge' | 'histogram'
/** decisions "Prometheus metrics": the service's own series and their types. */
const SVC_SERIES: Record<string, Kind> = {
  svc_http_requests_total: 'counter',
  svc_http_request_duration_seconds: 'histogram',
  svc_chat_turn_duration_seconds: 'histogram',
  svc_voice_turn_latency_seconds: 'histogram',
  svc_jobs_total: 'counter',
  svc_webhook_deliveries_total: 'counter',
  svc_calls_active: 'gauge',
  svc_db_pool_connections: 'gauge',
}

/** prom-client's process defaults, as the installed version names them (what /metrics adds to SVC_SERIES). */
async function defaultSeries(): Promise<Record<string, Kind>> {
  const register = new Registry()
  collectDefaultMetrics({ register })
  const json = await register.getMetricsAsJSON()
  register.clear()
  return Object.fromEntries(json.map((m) => [m.name, String(m.type) as Kind]))
}

/** Every sample name a series exposes: a histogram's _bucket, _sum and _count, the others their own name. */
function sampleNames(series: Record<string, Kind>): Map<string, { base: string; kind: Kind; cumulative: boolean }> {
  const out = new Map<string, { base: string; kind: Kind; cumulative: boolean }>()
  for (const [base, kind] of Object.entries(series)) {
    if (kind === 'histogram')
      for (const s of ['_bucket', '_sum', '_count']) out.set(base + s, { base, kind, cumulative: true })
    else out.set(base, { base, kind, cumulative: kind === 'counter' })
  }
  return out
}

const NOT_METRICS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or'])
const noStrings = (expr: string) => expr.replace(/"(?:[^"\\]|\\.)*"/g, '""')

/** The metric names a PromQL expression selects (function names, keywords, labels and strings left out). */
function metricsIn(expr: string): string[] {
  const bare = noStrings(expr)
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
  return [...bare.matchAll(/(?<![\w:.$])([a-zA-Z_:][\w:]*)(\s*\()?/g)]
    .filter((m) => !m[2] && !NOT_METRICS.has(m[1]))
    .map((m) => m[1])
}

/** The expression with every histogram_quantile(…) call taken out. */
function withoutQuantiles(e: string): string {
  const at = e.indexOf('histogram_quantile(')
  if (at < 0) return e
  const inner = balanced(e, at + 'histogram_quantile'.length)
  return withoutQuantiles(e.slice(0, at) + e.slice(at + 'histogram_quantile'.length + inner.length + 2))
}

/** The text between the parenthesis that opens at `open` and its match. */
function balanced(s: string, open: number): string {
  let depth = 0
  for (let i = open; i < s.length; i++) {
    if (s[i] === '(') depth++
    else if (s[i] === ')' && --depth === 0) return s.slice(open + 1, i)
  }
  throw new Error(`unbalanced parentheses in ${s}`)
}

interface Panel {
  id: number
  type: string
  title: string
  datasource?: { type: string; uid: string }
  gridPos: { x: number; y: number; w: number; h: number }
  targets?: { expr: string; datasource: { type: string; uid: string } }[]
  panels?: Panel[]
}
const dashboard = JSON.parse(read('ops/grafana/svc-overview.json'))
const allPanels: Panel[] = dashboard.panels.flatMap((p: Panel) => [p, ...(p.panels ?? [])])
const queryPanels = allPanels.filter((p) => p.type !== 'row')
const exprs = queryPanels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p, expr: t.expr })))
const variables: any[] = dashboard.templating.list
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, interpolated by Grafana
const DATASOURCE_UID = '${datasource}'

describe('ops/grafana/svc-overview.json', () => {
  it('is an importable dashboard: uid, title, a recent schema, a prometheus datasource variable, unique ids', () => {
    verifies('ops.dashboard')
    expect(dashboard).toMatchObject({ uid: 'svc-overview', title: 'svc overview' })
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36)
    expect(dashboard).not.toHaveProperty('id') // an id would overwrite whatever dashboard has it on import
    expect(variables.find((v) => v.name === 'datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' })
    const ids = allPanels.map((p) => p.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(queryPanels.length).toBeGreaterThanOrEqual(15)
    for (const p of queryPanels) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: DATASOURCE_UID })
      expect(p.targets?.length, p.title).toBeGreaterThan(0)
      for (const t of p.targets ?? []) expect(t.datasource.uid, p.title).toBe(DATASOURCE_UID)
    }
    // No two panels share a cell of the 24-column grid.
    const cells = new Set<string>()
    for (const p of allPanels)
      for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++)
        for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
          expect(x, p.title).toBeLessThan(24)
          expect(cells.has(`${x},${y}`), `${p.title} overlaps at ${x},${y}`).toBe(false)
          cells.add(`${x},${y}`)
        }
  })

  it('names only series the service exports, and uses every svc_* series', async () => {
    verifies('ops.dashboard')
    const samples = sampleNames({ ...SVC_SERIES, ...(await defaultSeries()) })
    const varQueries = variables
      .filter((v) => v.type === 'query')
      .map((v) => String(v.definition).match(/^label_values\(\s*([a-zA-Z_:][\w:]*)/)?.[1])
    expect(varQueries.every(Boolean)).toBe(true)
    const used = [...exprs.flatMap((e) => metricsIn(e.expr)), ...(varQueries as string[])]
    const unknown = used.filter((name) => !samples.has(name))
    expect(unknown).toEqual([])
    const bases = new Set(used.map((name) => samples.get(name)!.base))
    expect(Object.keys(SVC_SERIES).filter((s) => !bases.has(s))).toEqual([])
    for (const d of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_p99_seconds'])
      expect(bases.has(d), d).toBe(true)
    // The extractor itself: a function name, a label list and a string are not metrics.
    expect(metricsIn('sum by (le, route) (rate(x_bucket{a="b_c"}[5m])) / on (job) y > 0')).toEqual(['x_bucket', 'y'])
  })

  it('reads counters through rate(), never a gauge, and quantiles over _bucket summed by le', async () => {
    verifies('ops.dashboard')
    const samples = sampleNames({ ...SVC_SERIES, ...(await defaultSeries()) })
    const quantiles = new Map<string, Set<number>>()
    for (const { panel, expr } of exprs) {
      const e = noStrings(expr)
      for (const name of new Set(metricsIn(expr))) {
        const all = e.match(new RegExp(`(?<![\\w:])${name}(?![\\w:])`, 'g'))?.length ?? 0
        const inRate =
          e.match(new RegExp(`\\b(?:rate|irate|increase)\\(\\s*${name}\\s*(?:\\{[^}]*\\})?\\s*\\[`, 'g'))?.length ?? 0
        if (samples.get(name)!.cumulative) expect(inRate, `${panel.title}: ${name} outside rate()`).toBe(all)
        else expect(inRate, `${panel.title}: rate() of the gauge ${name}`).toBe(0)
      }
      for (const m of e.matchAll(/histogram_quantile\(/g)) {
        const inner = balanced(e, m.index! + m[0].length - 1)
        const [, q] = inner.match(/^\s*([0-9.]+)\s*,/) ?? []
        expect(Number(q), panel.title).toBeGreaterThan(0)
        expect(Number(q), panel.title).toBeLessThan(1)
        const [bucket] = metricsIn(inner)
        expect(bucket, panel.title).toMatch(/_bucket$/)
        expect(metricsIn(inner), panel.title).toEqual([bucket])
        const by = inner
          .match(/sum\s+by\s*\(([^)]*)\)/)?.[1]
          .split(',')
          .map((s) => s.trim())
        expect(by, panel.title).toContain('le')
        const base = samples.get(bucket)!.base
        quantiles.set(base, new Set([...(quantiles.get(base) ?? []), Number(q)]))
      }
      expect(withoutQuantiles(e), `${panel.title}: a _bucket read outside histogram_quantile`).not.toContain('_bucket')
    }
    expect([...(quantiles.get('svc_http_request_duration_seconds') ?? [])].sort()).toEqual([0.5, 0.95, 0.99])
    expect(quantiles.get('svc_chat_turn_duration_seconds')).toContain(0.95)
    expect([...(quantiles.get('svc_voice_turn_latency_seconds') ?? [])].sort()).toEqual([0.5, 0.95])
    // The number a phone caller feels: a stat of the first_audio p95.
    const firstAudio = queryPanels.filter(
      (p) =>
        p.type === 'stat' &&
        p.targets?.some((t) => t.expr.includes('stage="first_audio"') && t.expr.includes('histogram_quantile(0.95')),
    )
    expect(firstAudio).toHaveLength(1)
  })

  it('refers only to template variables it defines or Grafana provides', () => {
    verifies('ops.dashboard')
    const defined = new Set([...variables.map((v) => v.name), '__rate_interval', '__range', '__interval'])
    const texts = [...exprs.map((e) => e.expr), ...variables.map((v) => String(v.definition ?? ''))]
    const refs = texts.flatMap((t) => [...t.matchAll(/\$\{?(\w+)/g)].map((m) => m[1])).filter((r) => !/^\d+$/.test(r))
    expect(refs.filter((r) => !defined.has(r))).toEqual([])
    expect(refs).toEqual(expect.arrayContaining(['job', 'instance', 'route', '__rate_interval']))
  })
})

describe('ops/prometheus.yml and ops/otel-collector.yaml', () => {
  it('scrapes /metrics with a bearer credential from a file', () => {
    verifies('ops.scrape-config')
    const config = parseYaml(read('ops/prometheus.yml'))
    const job = config.scrape_configs.find((j: any) => j.metrics_path === '/metrics')
    expect(job).toBeDefined()
    expect(job.authorization).toMatchObject({ type: 'Bearer', credentials_file: expect.stringMatching(/^\//) })
    expect(job.authorization).not.toHaveProperty('credentials') // the token stays out of the config
    const seconds = (d: string) => Number(d.match(/^(\d+)s$/)![1])
    expect(seconds(job.scrape_interval)).toBeLessThanOrEqual(60)
    expect(seconds(job.scrape_timeout)).toBeLessThan(seconds(job.scrape_interval))
    expect(job.static_configs[0].targets.length).toBeGreaterThan(0)
  })

  it('collects OTLP over HTTP into a traces pipeline whose parts are all defined', () => {
    verifies('ops.scrape-config')
    const c = parseYaml(read('ops/otel-collector.yaml'))
    expect(c.receivers.otlp.protocols.http.endpoint).toMatch(/:4318$/)
    const traces = c.service.pipelines.traces
    expect(traces.receivers).toContain('otlp')
    for (const kind of ['receivers', 'processors', 'exporters'])
      for (const name of traces[kind]) expect(c[kind], `${kind}.${name}`).toHaveProperty([name])
  })
})

describe('the Running in production guide (source)', () => {
  const sources = (dir: string): string[] =>
    readdirSync(join(ROOT, dir)).flatMap((n) => {
      const rel = `${dir}/${n}`
      if (statSync(join(ROOT, rel)).isDirectory()) return sources(rel)
      // Guides are prose: a name they mention is not a name the code reads.
      return rel.endsWith('.ts') && !rel.endsWith('guide.ts') ? [read(rel)] : []
    })

  // The exporter reads its per-signal variables through a template: OTEL_EXPORTER_OTLP_${signalIdentifier}_ENDPOINT.
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the text of the SDK's template literal, searched for
  const PER_SIGNAL = '_${signalIdentifier}_'

  it('names only variables the service or the OpenTelemetry SDK reads', () => {
    verifies('ops.production-guide')
    const code = [...sources('server'), ...sources('providers')].join('\n')
    const sdk = [
      'otlp-exporter-base/build/src/configuration/otlp-node-http-env-configuration.js',
      'sdk-trace-base/build/src/config.js',
      'resources/build/src/detectors/EnvDetector.js',
    ]
      .map((f) => read(`node_modules/@opentelemetry/${f}`))
      .join('\n')
    const named = new Set(
      PRODUCTION_GUIDE.match(/\b(?:SVC|OTEL|NITRO|OPENAI|TWILIO|DEEPGRAM|SPEECH|SMTP|DATABASE|REDIS)_[A-Z0-9_]+\b/g),
    )
    // SVC_METRICS_TOKEN is fixed by decisions "Prometheus metrics" and read by the /metrics route.
    const isRead = (name: string) =>
      name.startsWith('OTEL_')
        ? sdk.includes(name) || sdk.includes(name.replace('_TRACES_', PER_SIGNAL))
        : name === 'SVC_METRICS_TOKEN' || new RegExp(`\\b${name}\\b`).test(code)
    expect([...named].filter((n) => !isRead(n))).toEqual([])
    expect(named).toContain('SVC_MASTER_KEY')
    expect(named).toContain('OTEL_TRACES_SAMPLER')
  })

  it('shows the same scrape job as ops/prometheus.yml, in YAML that parses', () => {
    verifies('ops.production-guide')
    const blocks = [...PRODUCTION_GUIDE.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1])
    expect(blocks.length).toBeGreaterThanOrEqual(2)
    for (const b of blocks) expect(parseAllDocuments(b).every((d) => d.errors.length === 0)).toBe(true)
    const shown = blocks.map((b) => parseYaml(b)).find((y) => y?.scrape_configs)?.scrape_configs[0]
    const example = parseYaml(read('ops/prometheus.yml')).scrape_configs[0]
    for (const key of ['job_name', 'metrics_path', 'authorization']) expect(shown[key], key).toEqual(example[key])
    for (const s of Object.keys(SVC_SERIES)) expect(PRODUCTION_GUIDE, s).toContain(`\`${s}\``)
    for (const file of ['ops/grafana/svc-overview.json', 'ops/prometheus.yml', 'ops/otel-collector.yaml']) {
      expect(PRODUCTION_GUIDE, file).toContain(file)
      expect(statSync(join(ROOT, file)).isFile()).toBe(true)
    }
  })
})
