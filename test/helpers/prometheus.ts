// The Prometheus text format read as a scraper reads it, with parse-prometheus-text-format (a port of the
// Python client's parser: it validates every line). That parser folds all samples of a histogram into one,
// whatever their labels (it handles unlabelled histograms only), so a histogram is handed to it as its three
// plain series (name_bucket, name_sum, name_count) and put back together here, per label set.
// @ts-expect-error the package ships no types
import parse from 'parse-prometheus-text-format'

export interface Sample {
  labels?: Record<string, string>
  value?: string
  /** Histograms: cumulative counts by upper bound ("+Inf" included). */
  buckets?: Record<string, string>
  count?: string
  sum?: string
}
export interface Family {
  name: string
  help: string
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED'
  metrics: Sample[]
}

const key = (labels: Record<string, string> | undefined) =>
  JSON.stringify(Object.entries(labels ?? {}).sort(([a], [b]) => a.localeCompare(b)))

export function parseExposition(text: string): Family[] {
  const histograms = new Set([...text.matchAll(/^# TYPE (\S+) histogram$/gm)].map((m) => m[1]))
  // Read that way, one label set's _bucket, _sum and _count lines come before the next set's: the parser
  // starts a family at each change of name, so families of one name are joined again.
  const byName = new Map<string, Family>()
  for (const f of parse(text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped')) as Family[]) {
    const seen = byName.get(f.name)
    if (seen) seen.metrics.push(...f.metrics)
    else byName.set(f.name, f)
  }
  const families = [...byName.values()]
  const parts = new Set<string>()
  for (const name of histograms) {
    const series = new Map<string, Sample>()
    const at = (labels: Record<string, string> | undefined) => {
      const k = key(labels)
      let s = series.get(k)
      if (!s) {
        s = { labels: labels ?? {}, buckets: {} }
        series.set(k, s)
      }
      return s
    }
    for (const b of byName.get(`${name}_bucket`)?.metrics ?? []) {
      const { le, ...labels } = b.labels ?? {}
      at(labels).buckets![le] = b.value!
    }
    for (const c of byName.get(`${name}_count`)?.metrics ?? []) at(c.labels).count = c.value
    for (const s of byName.get(`${name}_sum`)?.metrics ?? []) at(s.labels).sum = s.value
    const f = byName.get(name)
    if (f) Object.assign(f, { type: 'HISTOGRAM', metrics: [...series.values()] })
    for (const suffix of ['_bucket', '_count', '_sum']) parts.add(`${name}${suffix}`)
  }
  return families.filter((f) => !parts.has(f.name))
}

/** The family of that name, or undefined. */
export const family = (families: Family[], name: string) => families.find((f) => f.name === name)
