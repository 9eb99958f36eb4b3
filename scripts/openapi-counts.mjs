// Counts the gaps that keep a client generator from trusting /v1/openapi.json (issue 37). Prints four
// numbers, each 0 when the document is complete:
//   lists_without_pagination    2xx responses with a `data` array without `meta`, or without `pagination`
//                               where the operation pages (a cursor or limit parameter)
//   empty_schema_properties     response properties whose schema is `{}` (says nothing)
//   at_without_date_time        response `*_at` properties without `format: date-time`
//   string_typed_query_params   query parameters that mean an integer or a boolean but are typed string
//
//   node scripts/openapi-counts.mjs [document.json | http://…/v1/openapi.json]
// Without an argument it boots the built server (.output) on a fresh data dir and reads its document.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnServer } from './spawn-server.mjs'

export async function loadDocument(arg) {
  if (arg?.startsWith('http')) return (await fetch(arg)).json()
  if (arg) return JSON.parse(readFileSync(arg, 'utf8'))
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-counts-'))
  const env = { ...process.env }
  delete env.DATABASE_URL
  const server = await spawnServer({
    env: {
      ...env,
      PORT: '0',
      HOST: '127.0.0.1',
      SVC_DATA_DIR: dir,
      SVC_MASTER_KEY: `svc_mk_live_${'c'.repeat(48)}`,
      SVC_SECRET: `counts-${'x'.repeat(40)}`,
    },
    cwd: dir,
  })
  try {
    return await (await fetch(`${server.origin}/v1/openapi.json`)).json()
  } finally {
    await server.stop('SIGTERM')
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Follows a local $ref (#/components/schemas/X). */
const deref = (doc, s) => {
  let out = s
  for (let i = 0; out?.$ref && i < 10; i++)
    out = out.$ref
      .split('/')
      .slice(1)
      .reduce((o, k) => o?.[k], doc)
  return out
}

/** Every object schema reachable from `schema`, once each (shared components are visited once per document). */
function walk(doc, schema, visit, seen = new Set()) {
  const s = deref(doc, schema)
  if (!s || typeof s !== 'object' || seen.has(s)) return
  seen.add(s)
  if (s.properties) for (const [name, p] of Object.entries(s.properties)) visit(name, deref(doc, p), p)
  for (const p of Object.values(s.properties ?? {})) walk(doc, p, visit, seen)
  for (const k of ['items', 'additionalProperties', 'not'])
    if (s[k] && typeof s[k] === 'object') walk(doc, s[k], visit, seen)
  for (const k of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) for (const x of s[k] ?? []) walk(doc, x, visit, seen)
}

const isEmpty = (s) => s && typeof s === 'object' && Object.keys(s).length === 0
const options = (s) => [s, ...(s.anyOf ?? []), ...(s.oneOf ?? [])]
const hasDateTime = (doc, s) => options(deref(doc, s)).some((o) => deref(doc, o)?.format === 'date-time')
const typesOf = (s) => options(s).flatMap((o) => [o.type ?? []].flat())

const INTEGER_WORDS = /^(limit|offset|page|count|min_\w+|max_\w+|\w+_ms|\w+_s|\w+_seconds|\w+_days|days|hours)$/

export function countGaps(doc) {
  const counts = {
    lists_without_pagination: 0,
    empty_schema_properties: 0,
    at_without_date_time: 0,
    string_typed_query_params: 0,
  }
  const seen = new Set()
  for (const item of Object.values(doc.paths ?? {}))
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue
      for (const [status, res] of Object.entries(op.responses ?? {})) {
        if (!/^2/.test(status)) continue
        const schema = deref(doc, res.content?.['application/json']?.schema)
        if (!schema) continue
        const props = schema.properties ?? {}
        // A report with a data array (usage, metrics) is a single object: it needs meta but no pagination.
        const pages = (op.parameters ?? []).some((p) => p.in === 'query' && (p.name === 'cursor' || p.name === 'limit'))
        if (deref(doc, props.data)?.type === 'array' && (!props.meta || (pages && !props.pagination)))
          counts.lists_without_pagination++
        walk(
          doc,
          schema,
          (name, p) => {
            if (isEmpty(p)) counts.empty_schema_properties++
            // RFC 7591's client_id_issued_at is epoch seconds: only string-typed timestamps count.
            if (/_at$/.test(name) && typesOf(p).includes('string') && !hasDateTime(doc, p))
              counts.at_without_date_time++
          },
          seen,
        )
      }
      for (const param of op.parameters ?? []) {
        if (param.in !== 'query') continue
        const s = param.schema ?? {}
        const scalar = s.type === 'array' ? (s.items ?? {}) : s
        const types = typesOf(scalar)
        if (!types.includes('string')) continue
        const values = scalar.enum ?? []
        const booleanWords = values.length && values.every((x) => x === 'true' || x === 'false')
        const digits = /^\^(\\d|\[0-9\])(\{\d+(,\d+)?\}|\+)\$$/.test(scalar.pattern ?? '')
        if (booleanWords || digits || INTEGER_WORDS.test(param.name)) counts.string_typed_query_params++
      }
    }
  return counts
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const counts = countGaps(await loadDocument(process.argv[2]))
  for (const [k, n] of Object.entries(counts)) console.log(`${k.padEnd(28)} ${n}`)
}
