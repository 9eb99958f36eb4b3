// Black-box tests of the contract machinery over HTTP: envelopes, request ids, no-store, errors, 413,
// the /api/v1 alias, health, OpenAPI and the reference.
import { request as httpRequest } from 'node:http'
import { readdirSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { unzipSync, strFromU8 } from 'fflate'
import { parse as parseYaml } from 'yaml'
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, uniqueEmail } from '../helpers/api'
import { verifies } from '../requirements'
import { pumpedPost } from '../helpers/pumped-post'

const base = inject('base')
const origin = inject('origin')
const master = inject('masterKey')
const api = createApi(base, master)
const anon = createApi(base)

function expectErrorEnvelope(r: { status: number; body: any; headers: Headers }, status: number, code: string) {
  expect(r.status).toBe(status)
  expect(r.body.error.code).toBe(code)
  expect(typeof r.body.error.message).toBe('string')
  expect(r.body.error).toHaveProperty('field')
  expect(r.body.error.request_id).toBe(r.headers.get('x-request-id'))
  expect(r.body.meta).toEqual({ request_id: r.headers.get('x-request-id'), environment: 'production' })
  expect(r.headers.get('cache-control')).toBe('no-store')
}

describe('envelopes and headers', () => {
  it('a single object carries meta with request_id and environment production', async () => {
    verifies('envelope.single', 'envelope.environment', 'health.body', 'health.public')
    const r = await anon.get('/health')
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ status: 'ok', version: '1.0.0' })
    expect(r.body.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
    for (const c of ['api', 'db', 'transcripts', 'summaries', 'webhooks', 'media', 'jobs'])
      expect(r.body.components[c]).toBe('ok')
    expect(r.body.meta).toEqual({ request_id: r.headers.get('x-request-id'), environment: 'production' })
    expect(r.headers.get('x-ratelimit-limit')).toBeNull()
  })

  it('every error uses the error envelope with environment production', async () => {
    verifies('envelope.error', 'envelope.environment', 'errors.not_found')
    const r = await anon.get('/no/such/route')
    expectErrorEnvelope(r, 404, 'not_found')
    expect(r.body.error.field).toBeNull()
    expect(r.text).not.toContain('/no/such/route')
  })

  it('an unknown route is 404 before authentication, also under /api/v1', async () => {
    verifies('errors.not_found', 'conventions.base-path-alias')
    expectErrorEnvelope(await anon.get('/users/usr_1/nothing-here'), 404, 'not_found')
    expectErrorEnvelope(await createApi(`${origin}/api/v1`).get('/nothing'), 404, 'not_found')
  })

  it('a wrong method is 405 method_not_allowed with Allow', async () => {
    verifies('errors.method_not_allowed')
    const r = await anon.request('DELETE', '/health')
    expectErrorEnvelope(r, 405, 'method_not_allowed')
    expect(r.headers.get('allow')).toBe('GET')
  })

  it('uses a printable client X-Request-Id of at most 64 characters', async () => {
    verifies('conventions.request-id')
    const id = 'client-' + 'x'.repeat(57)
    expect(id.length).toBe(64)
    const r = await anon.get('/health', { headers: { 'x-request-id': id } })
    expect(r.headers.get('x-request-id')).toBe(id)
    expect(r.body.meta.request_id).toBe(id)
    const e = await anon.get('/missing', { headers: { 'x-request-id': 'trace:abc/123' } })
    expect(e.headers.get('x-request-id')).toBe('trace:abc/123')
    expect(e.body.error.request_id).toBe('trace:abc/123')
  })

  it('mints req_… when the client id is too long, has spaces or control characters, or is absent', async () => {
    verifies('conventions.request-id')
    for (const bad of ['y'.repeat(65), 'has space', 'tab\there', '']) {
      const r = await anon.get('/health', { headers: bad ? { 'x-request-id': bad } : {} })
      const id = r.headers.get('x-request-id')!
      expect(id).toMatch(/^req_[A-Za-z0-9_-]+$/)
      expect(id).not.toBe(bad)
    }
    const a = (await anon.get('/health')).headers.get('x-request-id')
    const b = (await anon.get('/health')).headers.get('x-request-id')
    expect(a).not.toBe(b)
  })

  it('sends Cache-Control: no-store on success, client errors, 404, 405 and auth failures', async () => {
    verifies('conventions.no-store')
    const responses = await Promise.all([
      anon.get('/health'),
      anon.get('/openapi.json'),
      anon.get('/nope'),
      anon.request('PUT', '/health'),
      anon.post('/users', { email: 'x@example.com' }),
      api.get('/users/usr_0x'),
    ])
    for (const r of responses) expect(r.headers.get('cache-control')).toBe('no-store')
  })
})

describe('security headers', () => {
  it('X-Content-Type-Options: nosniff on every response: success, errors, 404, 405, 401, HTML and YAML', async () => {
    verifies('http.security-headers')
    const responses = [
      await anon.get('/health'),
      await api.get('/users?limit=1'),
      await api.post('/users', { email: 'nope' }),
      await anon.get('/nowhere'),
      await anon.request('DELETE', '/health'),
      await anon.get('/users'),
      await anon.get('/docs'),
      await anon.get('/openapi.yaml'),
      await createApi(origin).get('/.well-known/oauth-authorization-server'),
    ]
    expect(responses.map((r) => r.status)).toEqual([200, 200, 400, 404, 405, 401, 200, 200, 200])
    for (const r of responses) expect(r.headers.get('x-content-type-options'), String(r.status)).toBe('nosniff')
  })

  it('Strict-Transport-Security only over https: here when a trusted proxy (loopback) says X-Forwarded-Proto: https', async () => {
    verifies('http.security-headers', 'client-ip.trusted-proxies')
    expect((await anon.get('/health')).headers.get('strict-transport-security')).toBeNull()
    expect((await anon.get('/nowhere')).headers.get('strict-transport-security')).toBeNull()
    const https = { headers: { 'x-forwarded-proto': 'https' } }
    for (const r of [
      await anon.get('/health', https),
      await anon.get('/nowhere', https),
      await anon.get('/users', https),
    ]) {
      expect(r.headers.get('strict-transport-security'), String(r.status)).toMatch(
        /^max-age=\d{8,}; includeSubDomains$/,
      )
    }
  })

  it('the HTML reference has a strict CSP with no script source, and keeps its inline styles', async () => {
    verifies('http.security-headers', 'docs.reference')
    const html = await anon.get('/docs')
    const csp = html.headers.get('content-security-policy') ?? ''
    const directives = Object.fromEntries(
      csp
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([k, ...v]) => [k, v.join(' ')]),
    )
    expect(directives).toMatchObject({
      'default-src': "'none'",
      'style-src': "'unsafe-inline'",
      'base-uri': "'none'",
      'form-action': "'none'",
      'frame-ancestors': "'none'",
    })
    expect(directives['script-src']).toBeUndefined()
    expect(html.text).toMatch(/<style>[^<]{100,}<\/style>/)
    expect(html.text).not.toMatch(/<script|<[^>]+\son[a-z]+=/i)
    expect((await anon.get('/health')).headers.get('content-security-policy')).toBeNull()
  })
})

describe('request validation', () => {
  it('malformed JSON is 400 invalid_json', async () => {
    verifies('errors.invalid_json')
    const r = await api.request('POST', '/users', { raw: '{"email":', headers: { 'content-type': 'application/json' } })
    expectErrorEnvelope(r, 400, 'invalid_json')
    const charset = await api.request('POST', '/users', {
      raw: '{oops}',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    })
    expectErrorEnvelope(charset, 400, 'invalid_json')
  })

  it('a body that is not JSON is 415, a JSON array is validation_error', async () => {
    verifies('errors.unsupported_media_type', 'errors.validation_error')
    expectErrorEnvelope(
      await api.request('POST', '/users', {
        raw: 'email=a@b.c',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
      'unsupported_media_type',
    )
    expectErrorEnvelope(
      await api.request('POST', '/users', { raw: '[1,2]', headers: { 'content-type': 'application/json' } }),
      400,
      'validation_error',
    )
  })

  it('a non-empty body without a Content-Type is 415; an empty one is still read as no body', async () => {
    verifies('http.json-content-type', 'errors.unsupported_media_type')
    // A Uint8Array body makes fetch send no Content-Type at all.
    const bytes = new TextEncoder().encode(JSON.stringify({ email: uniqueEmail('no-type') }))
    const r = await api.request('POST', '/users', { raw: bytes })
    expect(r.headers.get('content-type')).toContain('application/json')
    expectErrorEnvelope(r, 415, 'unsupported_media_type')
    expectErrorEnvelope(
      await api.request('POST', '/users', { raw: 'not json', headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    )
    // +json media types are JSON; an empty body needs no type (the body is then validated like {}).
    expect(
      (
        await api.request('POST', '/users', {
          raw: JSON.stringify({ email: uniqueEmail('vnd') }),
          headers: { 'content-type': 'application/vnd.api+json' },
        })
      ).status,
    ).toBe(201)
    expectErrorEnvelope(await api.request('POST', '/users', { raw: new Uint8Array(0) }), 400, 'validation_error')
  })

  it('an unknown body key is 400 unsupported_field naming it, and nothing is written', async () => {
    verifies('errors.unsupported_field')
    const email = uniqueEmail('unk')
    const r = await api.post('/users', { email, colour: 'blue' })
    expectErrorEnvelope(r, 400, 'unsupported_field')
    expect(r.body.error.field).toBe('colour')
    expect(r.body.error.message).toContain('colour')
    // The same e-mail is still free: the rejected request wrote nothing.
    expect((await api.post('/users', { email })).status).toBe(201)
  })

  it('a bad value is 400 validation_error with field; catalogue codes keep their own code', async () => {
    verifies('errors.validation_error')
    const plan = await api.post('/users', { email: uniqueEmail(), plan: 'gold' })
    expectErrorEnvelope(plan, 400, 'validation_error')
    expect(plan.body.error.field).toBe('plan')
    const nested = await api.post('/users', { email: uniqueEmail(), external_ids: { crm: 5 } })
    expectErrorEnvelope(nested, 400, 'validation_error')
    expect(nested.body.error.field).toBe('external_ids.crm')
    const missing = await api.post('/users', {})
    expectErrorEnvelope(missing, 400, 'validation_error')
    expect(missing.body.error.field).toBe('email')
    const email = await api.post('/users', { email: 'not-an-email' })
    expectErrorEnvelope(email, 400, 'invalid_email')
    expect(email.body.error.field).toBe('email')
  })

  it('an unknown query parameter is 400 unsupported_filter; a malformed id is 400 invalid_id', async () => {
    verifies('errors.unsupported_filter', 'conventions.ids')
    const r = await api.get('/users/usr_1?colour=blue')
    expectErrorEnvelope(r, 400, 'unsupported_filter')
    expect(r.body.error.field).toBe('colour')
    const id = await api.get('/users/agt_1')
    expectErrorEnvelope(id, 400, 'invalid_id')
    expect(id.body.error.field).toBe('usr')
  })

  it('an empty body on a write route is validated like {} (required fields named)', async () => {
    const r = await api.request('POST', '/users', { raw: '', headers: { 'content-type': 'application/json' } })
    expectErrorEnvelope(r, 400, 'validation_error')
    expect(r.body.error.field).toBe('email')
  })
})

describe('413 payload_too_large', () => {
  it('refuses a declared JSON body above 2 MB before reading it', async () => {
    verifies('errors.payload_too_large')
    const big = JSON.stringify({ email: 'a@example.com', name: 'x'.repeat(2 * 1024 * 1024) })
    const r = await api.request('POST', '/users', { raw: big, headers: { 'content-type': 'application/json' } })
    expectErrorEnvelope(r, 413, 'payload_too_large')
  })

  it('accepts a JSON body just under 2 MB (it then fails validation, not the size check)', async () => {
    const body = JSON.stringify({ email: uniqueEmail(), name: 'x'.repeat(2 * 1024 * 1024 - 200) })
    expect(body.length).toBeLessThan(2 * 1024 * 1024)
    const r = await api.request('POST', '/users', { raw: body, headers: { 'content-type': 'application/json' } })
    expectErrorEnvelope(r, 400, 'validation_error')
  })

  it('refuses a chunked body (no Content-Length) as soon as it passes the cap, without waiting for the end', async () => {
    verifies('errors.payload_too_large')
    const url = new URL(base + '/users')
    const result = await new Promise<{ status: number; body: string; sentBytes: number }>((resolveResult, reject) => {
      let sent = 0
      let done = false
      const req = httpRequest(
        {
          hostname: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'transfer-encoding': 'chunked',
            authorization: `Bearer ${master}`,
          },
        },
        (res) => {
          let body = ''
          res.on('data', (c) => (body += c))
          res.on('end', () => {
            done = true
            resolveResult({ status: res.statusCode!, body, sentBytes: sent })
          })
        },
      )
      req.on('error', (e) => {
        if (!done) reject(e)
      })
      const chunk = Buffer.alloc(64 * 1024, 'a')
      // Offer up to 6 MB, slowly enough that the server's answer arrives before we would finish.
      const pump = () => {
        if (done || sent >= 6 * 1024 * 1024) return req.end()
        sent += chunk.length
        req.write(chunk, () => setTimeout(pump, 2))
      }
      req.write('{"email":"')
      pump()
    })
    expect(result.status).toBe(413)
    expect(JSON.parse(result.body).error.code).toBe('payload_too_large')
    expect(result.sentBytes).toBeLessThan(6 * 1024 * 1024)
  })

  it('allows multipart bodies up to 10 MB: 3 MB passes the size check, 10 MB + 1 does not', async () => {
    verifies('errors.payload_too_large')
    const multipart = (size: number) =>
      `--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n${'a'.repeat(size)}\r\n--xyz--\r\n`
    const headers = { 'content-type': 'multipart/form-data; boundary=xyz', authorization: `Bearer ${master}` }
    const sized = (url: string, h: Record<string, string>, body: string) =>
      pumpedPost(url, { ...h, 'content-length': String(Buffer.byteLength(body)) }, Buffer.from(body))
    // POST /users takes JSON only, so a multipart body under the cap reaches the route and gets 415.
    const small = await sized(base + '/users', headers, multipart(3 * 1024 * 1024))
    expect(small.status).toBe(415)
    const over = await sized(base + '/users', headers, multipart(10 * 1024 * 1024 + 1))
    expect(over.status).toBe(413)
    expect(JSON.parse(over.body).error.code).toBe('payload_too_large')
  })
})

describe('authentication machinery', () => {
  it('no header or another scheme is 401 missing_credentials; an unknown key is 401 invalid_credentials', async () => {
    verifies('auth.missing_credentials', 'auth.invalid_credentials')
    expectErrorEnvelope(await anon.get('/users/usr_1'), 401, 'missing_credentials')
    expectErrorEnvelope(
      await anon.get('/users/usr_1', { headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } }),
      401,
      'missing_credentials',
    )
    expectErrorEnvelope(
      await anon.get('/users/usr_1', { key: 'svc_mk_live_' + 'z'.repeat(48) }),
      401,
      'invalid_credentials',
    )
    expectErrorEnvelope(await anon.get('/users/usr_1', { key: 'svc_sk_live_nope' }), 401, 'invalid_credentials')
  })

  it('limits failed unauthenticated attempts to 20 per minute per client IP (first X-Forwarded-For hop)', async () => {
    verifies('auth.ip-failure-limit', 'auth.invalid_credentials')
    const ip = `203.0.113.${(process.pid % 200) + 20}`
    const attempt = (forwarded: string) =>
      anon.get('/users/usr_1', { key: 'svc_sk_live_wrong', headers: { 'x-forwarded-for': forwarded } })
    for (let i = 0; i < 20; i++) expect((await attempt(`${ip}, 10.0.0.1`)).status).toBe(401)
    const limited = await attempt(`${ip}, 10.0.0.2`)
    expectErrorEnvelope(limited, 429, 'rate_limited')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    // Another client IP is unaffected, and a valid credential from the limited IP still works.
    expect((await attempt('198.51.100.9')).status).toBe(401)
    expect((await api.get('/users/usr_987654', { headers: { 'x-forwarded-for': ip } })).status).toBe(404)
  })

  it('metered responses carry the rate-limit headers', async () => {
    verifies('rate.headers')
    const r = await api.get('/users/usr_999999')
    expect(r.status).toBe(404)
    const limit = Number(r.headers.get('x-ratelimit-limit'))
    expect(limit).toBeGreaterThan(0)
    expect(Number(r.headers.get('x-ratelimit-remaining'))).toBeLessThan(limit)
    expect(Number(r.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1)
  })
})

describe('OpenAPI and reference', () => {
  let doc: any
  beforeAll(async () => {
    const r = await anon.get('/openapi.json')
    expect(r.status).toBe(200)
    doc = r.body
  })

  it('is OpenAPI 3.1 and lists every route file under server/routes', async () => {
    verifies('openapi.document')
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.info.version).toBe('1.0.0')
    const routesDir = resolve('server/routes')
    const files = (function walk(d: string): string[] {
      return readdirSync(d, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(join(d, e.name)) : [relative(routesDir, join(d, e.name))],
      )
    })(routesDir)
    const operations = files
      // Aliases re-dispatch to /v1 and /oauth; provider webhooks are not public API (decisions Telephony providers).
      .filter((f) => !f.startsWith('api/v1/') && !f.startsWith('v1/oauth/') && !f.startsWith('telephony/'))
      .map((f) => {
        const m = /^(.*?)(?:\.(get|post|patch|put|delete))?\.ts$/.exec(f)!
        const path = '/' + m[1].replace(/(^|\/)index$/, '').replace(/\[(\w+)\]/g, '{$1}')
        return { path: path.replace(/^\/v1/, '') || '/', method: m[2] ?? 'get' }
      })
    // One operation served on the origin root and under /v1 (POST /mcp) is one path item listing both servers.
    const expected = [...new Map(operations.map((o) => [`${o.method} ${o.path}`, o])).values()]
    expect(expected.length).toBeGreaterThan(5)
    for (const { path, method } of expected)
      expect(doc.paths[path]?.[method], `${method.toUpperCase()} ${path}`).toBeDefined()
    // A path item may carry `servers` (the /api dashboard paths): count operations only.
    const documented = Object.values(doc.paths).reduce(
      (n: number, ops: any) => n + Object.keys(ops).filter((k) => k !== 'servers').length,
      0,
    )
    expect(documented).toBe(expected.length)
  })

  it('shows each route scope, errors and examples', () => {
    verifies('openapi.document')
    const create = doc.paths['/users'].post
    expect(create['x-scope']).toBe('users:manage')
    expect(create.security).toEqual([{ bearerAuth: ['users:manage'] }])
    expect(create.requestBody.content['application/json'].schema.properties.email).toBeDefined()
    expect(create.requestBody.content['application/json'].schema.additionalProperties).toBe(false)
    expect(create.responses['201']).toBeDefined()
    expect(create.responses['409'].description).toContain('email_exists')
    expect(create.responses['400'].content['application/json'].example.error.code).toBeTypeOf('string')
    expect(doc.paths['/health'].get.security).toEqual([])
    expect(doc.paths['/users/{usr}'].get.parameters[0]).toMatchObject({ name: 'usr', in: 'path', required: true })
  })

  it('serves the same document as YAML', async () => {
    verifies('openapi.document')
    const r = await anon.get('/openapi.yaml')
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toContain('yaml')
    expect(parseYaml(r.text)).toEqual(doc)
  })

  it('renders the HTML reference with no external assets, and the Markdown pages and archive', async () => {
    verifies('docs.reference')
    const html = await anon.get('/docs')
    expect(html.status).toBe(200)
    expect(html.headers.get('content-type')).toContain('text/html')
    expect(html.text).toContain('/users/{usr}')
    expect(html.text).not.toMatch(/<script[^>]+src=|<link[^>]+href="https?:|https?:\/\/cdn/i)
    const pages = await anon.get('/docs/pages')
    expect(pages.status).toBe(200)
    expect(pages.body.pagination).toEqual({ limit: pages.body.data.length, has_more: false, next_cursor: null })
    const names = pages.body.data.map((p: any) => p.name)
    expect(names).toContain('overview')
    for (const name of names) {
      const page = await anon.get(`/docs/pages/${name}.md`)
      expect(page.status).toBe(200)
      expect(page.text.startsWith('# ')).toBe(true)
    }
    expectErrorEnvelope(await anon.get('/docs/pages/nothing.md'), 404, 'not_found')
    const all = await anon.get('/docs/all.md')
    expect(all.text).toContain('POST /users')
    const zip = await fetch(base + '/docs/download')
    expect(zip.headers.get('content-disposition')).toContain('attachment')
    const files = unzipSync(new Uint8Array(await zip.arrayBuffer()))
    expect(Object.keys(files)).toEqual(
      expect.arrayContaining(['openapi.json', 'openapi.yaml', 'all.md', 'pages/overview.md']),
    )
    expect(JSON.parse(strFromU8(files['openapi.json'])).paths).toEqual(doc.paths)
  })

  it('serves "Running in production": scraping /metrics and tracing, listed, linked and in the archive', async () => {
    verifies('ops.production-guide', 'docs.reference')
    const pages = await anon.get('/docs/pages')
    expect(pages.body.data).toContainEqual({
      name: 'running-in-production',
      title: 'Running in production',
      path: '/v1/docs/pages/running-in-production.md',
    })
    const page = await anon.get('/docs/pages/running-in-production.md')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/markdown')
    expect(page.text.startsWith('# Running in production\n')).toBe(true)
    for (const section of ['## The database', '## Several instances', '## Scraping metrics', '## Tracing'])
      expect(page.text).toContain(`\n${section}\n`)
    for (const name of [
      'GET /metrics',
      'SVC_METRICS_TOKEN',
      'svc_http_requests_total',
      'svc_voice_turn_latency_seconds',
      'ops/grafana/svc-overview.json',
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'OTEL_TRACES_SAMPLER',
      'traceparent',
    ])
      expect(page.text, name).toContain(name)
    expect((await anon.get('/docs/pages/overview.md')).text).toContain(
      '[Running in production](pages/running-in-production.md)',
    )
    expect((await anon.get('/docs')).text).toContain('<a href="docs/pages/running-in-production.md">')
    expect((await anon.get('/docs/all.md')).text).toContain(page.text)
    const zip = unzipSync(new Uint8Array(await (await fetch(base + '/docs/download')).arrayBuffer()))
    expect(strFromU8(zip['pages/running-in-production.md'])).toBe(page.text)
  })

  it('answers the same handlers under /api/v1', async () => {
    verifies('conventions.base-path-alias')
    const alias = createApi(`${origin}/api/v1`, master)
    const h = await alias.get('/health')
    expect(h.status).toBe(200)
    expect(h.body.version).toBe('1.0.0')
    const created = await alias.post('/users', { email: uniqueEmail('alias') })
    expect(created.status).toBe(201)
    const read = await api.get(`/users/${created.body.user_id}`)
    expect(read.body.email).toBe(created.body.email)
    expect((await alias.request('DELETE', '/health')).status).toBe(405)
  })
})
