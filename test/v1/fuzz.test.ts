// Generative fuzz of every write route's body and every GET's query string (issue 19, hostile input),
// driven by the schemas the OpenAPI document publishes, with fast-check. Path ids are real ids of a
// tenant of this file (test/helpers/fixture-tenant.ts), so each request reaches the route's parse step.
//  1. Valid and boundary bodies (routes that would do slow real work on a valid body — builds, calls,
//     chat turns, crawls, operator config and suspension — get invalid bodies only): never a 5xx, every
//     refusal the error envelope.
//  2. Query strings: valid values, unknown keys, bad values, repeats, broken percent-encoding.
//  3. Invalid bodies: an unknown key (400 unsupported_field naming it), one property broken against its
//     schema (400 validation_error or a coded 400 naming it; 413 past 2 MB), wrong top-level types, bad
//     JSON, bad UTF-8 bytes, lone surrogates, duplicate keys, 65+ levels of nesting, a wrong media type;
//     and a snapshot of every resource of the tenant before and after: a 4xx writes nothing.
// The seed is printed; SVC_FUZZ_SEED replays a run, SVC_FUZZ_RUNS scales the number of cases.
import { until } from '../helpers/wait'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, type Api, type ApiResponse } from '../helpers/api'
import { createFixtureTenant, type FixtureTenant } from '../helpers/fixture-tenant'
import { accepts, invalidOf, validOf, type Schema } from '../helpers/schema-fuzz'
import { masterOnly } from '../helpers/fixture-tenant'
import { verifies } from '../requirements'
import { openWidget } from '../helpers/widget'

const SEED = Number(process.env.SVC_FUZZ_SEED ?? 20_261_126)
const SCALE = Number(process.env.SVC_FUZZ_RUNS ?? 1)
const base = inject('base')
const origin = inject('origin')
const masterKey = inject('masterKey')
const master = createApi(base, masterKey)

/** Routes whose valid body starts real work (a build, a crawl, a call, a chat turn) or changes what other
 *  files share (the operator config, the fixture's own status): fuzzed with invalid bodies only. */
const INVALID_ONLY = [
  /^post \/accounts\/\{acc\}\/agents\/build$/,
  /^post \/agents\/\{agt\}\/build$/,
  /^post .*\/kb\/documents$/,
  /^post \/calls$/,
  /^post \/simulator\/inbound-calls$/,
  /^patch \/admin\/config$/,
  /^patch \/admin\/customers\/\{usr\}\/status$/,
  /^post \/admin\/agents\/\{agt\}\/actions$/,
  /^patch \/users\/\{usr\}$/,
  /^post \/mcp$/,
  /^post \/oauth\//,
  /^post \/api\/auth\//,
  /messages$/,
]

interface Op {
  key: string
  method: string
  path: string
  op: any
  /** The request's path with real ids, on its server (origin root or /v1). */
  url: string
  auth: 'master' | 'tenant' | 'session' | 'widget' | 'public'
  /** Answers the error envelope (OAuth endpoints answer RFC 6749 errors; MCP answers JSON-RPC). */
  envelope: boolean
  body: Schema | null
}

let fx: FixtureTenant
const ops: Op[] = []
let widgetConv: { id: string; visitor: string } | null = null
/** A body per route that passed the parse step in phase 1: the base the invalid cases break one part of. */
const parsedBase = new Map<string, Record<string, unknown>>()

function apiFor(o: Op): { api: Api; headers: Record<string, string> } {
  const api = createApi(
    o.op.servers ? origin : base,
    o.auth === 'master' ? masterKey : o.auth === 'tenant' ? fx.t.key : undefined,
  )
  const headers: Record<string, string> = {}
  if (o.auth === 'session') headers.authorization = `Session ${fx.session}`
  if (o.auth === 'widget') {
    headers['x-svc-widget-token'] = fx.widget.token
    headers.origin = fx.widget.origin
    if (widgetConv) headers['x-svc-visitor-token'] = widgetConv.visitor
  }
  return { api, headers }
}

async function send(
  o: Op,
  opts: { raw?: string | Uint8Array; type?: string; query?: string; method?: string } = {},
): Promise<ApiResponse> {
  const { api, headers } = apiFor(o)
  if (opts.raw !== undefined) headers['content-type'] = opts.type ?? 'application/json'
  return api.request(opts.method ?? o.method.toUpperCase(), o.url + (opts.query ?? ''), { raw: opts.raw, headers })
}

const label = (o: Op, what: string) => `${o.method.toUpperCase()} ${o.path} ${what} (seed ${SEED})`

/** No 5xx; every refusal of an envelope route is {error {code, message, field, request_id}, meta}. */
function expectSound(o: Op, r: ApiResponse, what: string) {
  expect(r.status, `${label(o, what)} → ${r.status} ${r.text.slice(0, 300)}`).toBeLessThan(500)
  if (r.status < 400 || !o.envelope) return
  expect(r.body?.error, `${label(o, what)}: ${r.text.slice(0, 300)}`).toBeTypeOf('object')
  const e = r.body.error
  expect(e.code, label(o, what)).toMatch(/^[a-z_]+$/)
  expect(e.message, label(o, what)).toBeTypeOf('string')
  expect('field' in e, label(o, what)).toBe(true)
  expect(e.request_id, label(o, what)).toBe(r.headers.get('x-request-id'))
  expect(r.body.meta, label(o, what)).toMatchObject({ request_id: e.request_id, environment: 'production' })
}

/** Answers refused by a rate limit before the parse step (classes the suite does not lift: backfill, metrics). */
let limited = 0

function expectError(o: Op, r: ApiResponse, what: string, status: number[], code: string[] | null, field?: string) {
  expectSound(o, r, what)
  if (r.status === 429 && r.body?.error?.code === 'rate_limited') {
    limited++
    return
  }
  expect(status, `${label(o, what)} → ${r.status} ${r.text.slice(0, 300)}`).toContain(r.status)
  if (!o.envelope) return
  if (code) expect(code, `${label(o, what)}: ${r.text.slice(0, 300)}`).toContain(r.body.error.code)
  if (field !== undefined) {
    const f = r.body.error.field as string | null
    const ok = f === field || (f !== null && (f.startsWith(`${field}.`) || f.startsWith(`${field}[`)))
    expect(ok, `${label(o, what)}: field ${f}, expected ${field}: ${r.text.slice(0, 300)}`).toBe(true)
  }
}

const jsonBody = (o: Op) => (o.op.requestBody?.content?.['application/json'] ? true : false)

beforeAll(async () => {
  console.log(`fuzz seed ${SEED} (replay: SVC_FUZZ_SEED=${SEED}); scale ${SCALE}`)
  fx = await createFixtureTenant(master, 'Fuzz')
  const ids: Record<string, string> = { ...fx.ids, page: 'overview', file: 'rec_1.mp3' }
  const doc = (await master.get('/openapi.json')).body
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (method === 'servers') continue
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])
      const missing = names.filter((n) => !ids[n])
      expect(missing, `${method} ${path}: no fixture id for ${missing}`).toEqual([])
      const concrete = path.replace(/\{(\w+)\}/g, (_, n) => ids[n])
      const sec = op.security ?? []
      const auth: Op['auth'] = !sec.length
        ? 'public'
        : sec.some((s: any) => s.sessionAuth)
          ? 'session'
          : sec.some((s: any) => s.widgetToken)
            ? 'widget'
            : masterOnly(op)
              ? 'master'
              : 'tenant'
      const content = op.requestBody?.content ?? {}
      const schema = content['application/json']?.schema ?? content['application/x-www-form-urlencoded']?.schema
      const onRoot = !!item.servers && !String(item.servers[0]?.description ?? '').includes('canonical')
      ops.push({
        key: `${method} ${path}`,
        method,
        path,
        op: { ...op, servers: onRoot ? item.servers : undefined },
        url: concrete,
        auth,
        envelope: !op.tags?.includes('OAuth') && path !== '/mcp',
        body: schema ?? null,
      })
    }
  }
  // A widget conversation of the fixture agent, so its messages route reaches the parse step.
  const w = ops.find((o) => o.key === 'post /widget/conversations')!
  const c = await send(w, { raw: '{}' })
  expect(c.status, c.text).toBe(201)
  widgetConv = { id: c.body.conversation_id, visitor: c.body.visitor_token }
  for (const o of ops) o.url = o.url.replace(fx.ids.conv, o.auth === 'widget' ? widgetConv.id : fx.ids.conv)
}, 120_000)

afterAll(async () => {
  await fx?.close()
})

const writes = () => ops.filter((o) => o.body && o.method !== 'get')
const validFor = (o: Op) => !INVALID_ONLY.some((re) => re.test(o.key))
/** Values the schema cannot say (no DNS here; ids must be the fixture's), by property name. */
const overrides = () => ({
  url: fc.constantFrom(`${fx.site.origin}/hook`, `${fx.site.origin}/`),
  website_url: fc.constant(`${fx.site.origin}/`),
  agent_id: fc.constant(fx.ids.agt),
  profile_id: fc.constant(fx.ids.prf),
  list_id: fc.constant(fx.ids.lst),
})

describe('generative fuzz of every write route and query string (shared server)', () => {
  it('valid and boundary bodies from each schema: never a 5xx, every refusal the error envelope', async () => {
    verifies('security.fuzz.no-5xx', 'envelope.error')
    const routes = writes().filter(validFor)
    expect(routes.length).toBeGreaterThan(20)
    for (const o of routes) {
      await fc.assert(
        fc.asyncProperty(validOf(o.body!, { overrides: overrides() }), async (body) => {
          const raw = JSON.stringify(body)
          const r = await send(o, { raw, type: jsonBody(o) ? 'application/json' : 'application/x-www-form-urlencoded' })
          expectSound(o, r, `valid body ${raw.slice(0, 200)}`)
          // Past the parse step for sure: accepted, or refused for a reason other than a 400 (a 400 may be a
          // coded schema message such as invalid_phone).
          const parsed = r.status < 400 || (r.status !== 400 && r.status !== 413 && r.status !== 429)
          if (parsed && !parsedBase.has(o.key) && body && typeof body === 'object') parsedBase.set(o.key, body as any)
        }),
        { seed: SEED, numRuns: 12 * SCALE },
      )
    }
    // The fixture's widget stays admitted for the later phases whatever the fuzz set, with its current token
    // (regenerate-token, which takes an account_id body like every data route's POST, was fuzzed too).
    fx.widget.token = await openWidget(fx.t.api, fx.ids.agt, { allowed_domains: ['fixture.example'] })
    console.log(`phase 1: ${routes.length} routes; a parsed base for ${parsedBase.size}`)
  }, 240_000)

  it('query strings of every GET: valid values, unknown keys, bad values, repeats, broken escapes', async () => {
    verifies('security.fuzz.query', 'errors.unsupported_filter')
    // GET /widget/voice is a WebSocket: any plain request is 426 before its query is read.
    const gets = ops.filter((o) => o.method === 'get' && o.path !== '/widget/voice')
    let checked = 0
    for (const o of gets) {
      const params = (o.op.parameters ?? []).filter((p: any) => p.in === 'query')
      const strict = o.envelope && o.auth !== 'public'
      // An unknown key: 400 unsupported_filter naming it (public documents may ignore it, never a 5xx).
      await fc.assert(
        fc.asyncProperty(fc.stringMatching(/^[a-z][a-z_]{0,15}$/), async (k) => {
          fc.pre(!params.some((p: any) => p.name === k))
          const r = await send(o, { query: `?${k}=1` })
          if (strict) expectError(o, r, `?${k}=1`, [400], ['unsupported_filter'], k)
          else expectSound(o, r, `?${k}=1`)
        }),
        { seed: SEED, numRuns: 2 * SCALE },
      )
      expectSound(o, await send(o, { query: '?%E0%A4%A&%ff=%fe&a%00=b%00' }), 'broken percent-encoding')
      for (const p of params) {
        const s: Schema = p.schema.type === 'array' ? p.schema.items : p.schema
        // Valid values (repeatable parameters given twice): any answer but a 5xx.
        await fc.assert(
          fc.asyncProperty(validOf(s, { overrides: { agent_id: fc.constant(fx.ids.agt) } }), async (v) => {
            const text = encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))
            const q = p.schema.type === 'array' ? `?${p.name}=${text}&${p.name}=${text}` : `?${p.name}=${text}`
            expectSound(o, await send(o, { query: q }), q)
          }),
          { seed: SEED, numRuns: 3 * SCALE },
        )
        if (!strict) continue
        // Bad values: every string the schema refuses is a 400 naming the parameter.
        for (const bad of invalidOf(s).filter((b) => typeof b.value === 'string' || typeof b.value === 'number')) {
          const v = String(bad.value)
          if (accepts(s, v) || (s.type === 'integer' && accepts(s, Number(v)))) continue
          const q = `?${p.name}=${encodeURIComponent(v)}`
          expectError(o, await send(o, { query: q }), `${q} (${bad.why})`, [400], null, p.name)
          checked++
        }
        if (p.schema.type !== 'array') {
          const q = `?${p.name}=a&${p.name}=b`
          expectError(o, await send(o, { query: q }), `${q} (repeated)`, [400], null, p.name)
        }
      }
    }
    console.log(`phase 2: ${gets.length} GET operations, ${checked} refused query values, ${limited} rate-limited`)
    expect(checked).toBeGreaterThan(30)
  }, 240_000)

  it('invalid bodies: the right code and field, and nothing of the tenant written on any 4xx', async () => {
    verifies('security.fuzz.invalid-bodies', 'security.fuzz.nothing-written', 'errors.unsupported_field')
    const routes = writes()
    // Background work that the valid bodies queued (a reindex waits for a worker) must finish first, or it
    // lands between the two snapshots and reads as a write of a 4xx.
    const before = await until(
      'the queued knowledge jobs to finish',
      async () => {
        const snap = (await fx.snapshot()) as Record<string, { body?: any }>
        const busy = Object.entries(snap).some(
          ([path, r]) => path.endsWith('/kb/summary') && ['queued', 'running'].includes(r.body?.last_job?.status),
        )
        return busy ? null : snap
      },
      90_000,
      500,
    )
    let cases = 0
    for (const o of routes) {
      const props: Record<string, Schema> = o.body!.properties ?? {}
      const closed = o.body!.additionalProperties === false
      const known = parsedBase.get(o.key)
      const baseBody = (known ??
        fc.sample(validOf(o.body!, { overrides: overrides() }), { numRuns: 1, seed: SEED })[0]) as Record<
        string,
        unknown
      >
      const type = jsonBody(o) ? 'application/json' : 'application/x-www-form-urlencoded'
      const strict = o.envelope && type === 'application/json'
      const post = (raw: string | Uint8Array, t = type) => send(o, { raw, type: t })
      // One property broken against its own schema.
      const mutations = Object.entries(props).flatMap(([p, s]) =>
        invalidOf(s).map((bad) => ({ p, value: bad.value, why: bad.why })),
      )
      if (mutations.length)
        await fc.assert(
          fc.asyncProperty(fc.constantFrom(...mutations), async (m) => {
            const r = await post(JSON.stringify({ ...baseBody, [m.p]: m.value }))
            cases++
            if (!strict) return expectSound(o, r, `${m.p}: ${m.why}`)
            // Without a base the server parsed, another property of the sample may be the one refused.
            const field = known ? m.p : undefined
            expectError(o, r, `${m.p}: ${m.why}`, [400, 413], null, field)
            if (r.status === 400) expect(r.body.error.field, label(o, `${m.p}: ${m.why}`)).not.toBeNull()
          }),
          { seed: SEED, numRuns: Math.min(mutations.length, 16 * SCALE) },
        )
      // An unknown key, alone or beside valid ones: 400 unsupported_field naming it (the unknown key wins).
      if (closed)
        await fc.assert(
          fc.asyncProperty(
            fc.stringMatching(/^[a-z_][a-z0-9_]{0,20}$/),
            fc.jsonValue({ maxDepth: 2 }),
            async (k, v) => {
              fc.pre(!(k in props))
              const r = await post(JSON.stringify({ ...baseBody, [k]: v }))
              cases++
              if (strict) expectError(o, r, `unknown key ${k}`, [400], ['unsupported_field'], k)
              else expectSound(o, r, `unknown key ${k}`)
            },
          ),
          { seed: SEED, numRuns: 3 * SCALE },
        )
      // A free-text property (no pattern, enum or format that would refuse the value first).
      const free = (x: Schema) => x.type === 'string' && !x.pattern && !x.enum && !x.format
      const first = Object.keys(props).find((p) => free(props[p]) || props[p].anyOf?.some(free))
      const deep = (d: number) => `${'['.repeat(d)}1${']'.repeat(d)}`
      const raws: [string, string | Uint8Array, number[], string[], string | null | undefined, string?][] = [
        ['a JSON array', '[1,2]', [400], ['validation_error'], null],
        ['a JSON string', '"x"', [400], ['validation_error'], null],
        ['truncated JSON', '{"a":', [400], ['invalid_json'], null],
        ['a trailing comma', '{"a":1,}', [400], ['invalid_json'], null],
        ['65 levels of nesting', `{"${first ?? 'x'}":${deep(70)}}`, [400], ['validation_error'], null],
        ['text/plain', '{}', [415], ['unsupported_media_type'], null, 'text/plain'],
        // Bytes that are not UTF-8 (a lone continuation byte, an overlong NUL, a truncated sequence).
        [
          'bad UTF-8 bytes',
          new Uint8Array([...Buffer.from(`{"${first ?? 'x'}":"a`), 0x80, 0xc0, 0x80, 0xe2, 0x82, ...Buffer.from('"}')]),
          [400],
          ['invalid_json'],
          null,
        ],
        [
          'a duplicate key',
          `{${['"dup_key":1', '"dup_key":2', ...Object.keys(baseBody).map((k) => `${JSON.stringify(k)}:${JSON.stringify(baseBody[k])}`)].join(',')}}`,
          [400],
          ['invalid_json'],
          null,
        ],
      ]
      if (first) {
        const lone = JSON.stringify({ ...baseBody, [first]: '<lone>' }).replace('"<lone>"', '"a\\ud800"')
        raws.push(['a lone surrogate', lone, [400], known ? ['validation_error'] : [], known ? first : undefined])
        raws.push([
          'the same key twice, the valid one last',
          `{${JSON.stringify(first)}:12,${JSON.stringify(first)}:${JSON.stringify(baseBody[first] ?? 'x')}}`,
          [400],
          ['invalid_json'],
          null,
        ])
      }
      // A record (a map of the client's own keys) given a key valibot's record used to drop silently.
      for (const [p, ps] of Object.entries(props)) {
        const rec = [ps, ...(ps.anyOf ?? [])].find(
          (x: Schema) => x.type === 'object' && !x.properties && x.additionalProperties !== false,
        )
        if (!rec) continue
        const v =
          rec.additionalProperties && typeof rec.additionalProperties === 'object'
            ? fc.sample(validOf(rec.additionalProperties), { numRuns: 1, seed: SEED })[0]
            : 'x'
        for (const k of ['constructor', '__proto__'])
          raws.push([
            `${p}.${k}`,
            JSON.stringify({ ...baseBody, [p]: { [k]: v } }),
            [400],
            known ? ['validation_error'] : [],
            known ? p : undefined,
          ])
      }
      if (o.op.requestBody && !o.op.requestBody.required && o.method === 'patch')
        raws.push(['an empty patch', '{}', [400], ['empty_update'], null])
      for (const [what, raw, status, code, field, t] of raws) {
        cases++
        const r = await post(raw, t ?? 'application/json')
        if (strict) expectError(o, r, what, status, code.length ? code : null, field ?? undefined)
        else expectSound(o, r, what)
      }
    }
    const after = await fx.snapshot()
    expect(after).toEqual(before)
    console.log(`phase 3: ${routes.length} write routes, ${cases} invalid cases; the tenant unchanged`)
  }, 300_000)
})
