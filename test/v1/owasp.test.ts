// OWASP API Security Top 10 (2023), one describe block per risk, each tried against the shared server
// (issue 19, hostile input). The operations come from the OpenAPI document, so a route added later is
// tried too; ids are real ids of two tenants of this file (test/helpers/fixture-tenant.ts).
// Bounds already proven elsewhere are not repeated: archives and upload sizes (upload-limits.test.ts),
// crawl caps (crawl-limits.test.ts, kb-crawl-cap.test.ts), quadratic patterns (hostile-input.test.ts),
// the URL guard on sockets (integration/url-guard.test.ts), the Operator tag (admin-refusals.test.ts).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, type ApiResponse } from '../helpers/api'
import { createFixtureTenant, masterOnly, type FixtureTenant } from '../helpers/fixture-tenant'
import { validOf } from '../helpers/schema-fuzz'
import { serveSite, type TestSite } from '../helpers/site'
import { sleep } from '../helpers/wait'
import { verifies } from '../requirements'

const base = inject('base')
const origin = inject('origin')
const masterKey = inject('masterKey')
const master = createApi(base, masterKey)

interface Op {
  method: string
  path: string
  op: any
  /** Served on the origin root (dashboard /api, OAuth), not under /v1. */
  onOrigin: boolean
  auth: 'master' | 'tenant' | 'session' | 'widget' | 'public'
}

let doc: any
let ops: Op[] = []
let a: FixtureTenant
let b: FixtureTenant

/** A client with an address of its own, so failed authentications of one check never limit another. */
const fresh = (o: Op | null, key?: string) => createApi(o?.onOrigin ? origin : base, key)
const concrete = (path: string, ids: Record<string, string>) => path.replace(/\{(\w+)\}/g, (_, n) => ids[n] ?? `x_1`)
const show = (r: ApiResponse) => `${r.status} ${r.text.slice(0, 200)}`

/** The error envelope, or on /mcp its JSON-RPC error carrying the same code (decisions "MCP"). */
function expectEnvelope(r: ApiResponse, what: string, status: number, codes?: string[]) {
  expect(r.status, `${what} → ${show(r)}`).toBe(status)
  if (r.body?.jsonrpc) {
    if (codes) expect(codes, `${what} → ${show(r)}`).toContain(r.body.error?.data?.code)
    return
  }
  expect(r.body?.error?.request_id, `${what} → ${show(r)}`).toBe(r.headers.get('x-request-id'))
  if (codes) expect(codes, `${what} → ${show(r)}`).toContain(r.body.error.code)
}

function authOf(op: any): Op['auth'] {
  const sec = op.security ?? []
  if (!sec.length) return 'public'
  if (sec.some((s: any) => s.sessionAuth)) return 'session'
  if (sec.some((s: any) => s.widgetToken)) return 'widget'
  return masterOnly(op) ? 'master' : 'tenant'
}

beforeAll(async () => {
  ;[a, b] = await Promise.all([createFixtureTenant(master, 'Alpha'), createFixtureTenant(master, 'Bravo')])
  doc = (await master.get('/openapi.json')).body
  for (const [path, item] of Object.entries<any>(doc.paths))
    for (const [method, op] of Object.entries<any>(item)) {
      if (method === 'servers') continue
      const onOrigin = !!item.servers && !String(item.servers[0]?.description ?? '').includes('canonical')
      ops.push({ method, path, op, onOrigin, auth: authOf(op) })
    }
  ops = ops.sort((x, y) => `${x.path} ${x.method}`.localeCompare(`${y.path} ${y.method}`))
}, 120_000)

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()])
})

describe('API1 Broken Object Level Authorization', () => {
  it("every operation with an id parameter answers 404 for another tenant's real id, and B is unchanged", async () => {
    verifies('security.owasp.bola', 'tenancy.isolation')
    // OAuth connection ids need the whole OAuth flow to exist; oauth.test.ts tries another user's.
    const targets = ops.filter(
      (o) =>
        /\{\w+\}/.test(o.path) &&
        (o.auth === 'tenant' || o.auth === 'session') &&
        !o.path.startsWith('/api/oauth/connections/'),
    )
    expect(targets.length).toBeGreaterThan(40)
    const before = await b.snapshot()
    const secrets = [b.t.email, b.widget.token]
    const refusedBeforeLookup: string[] = []
    for (const o of targets) {
      const names = [...o.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])
      // All of B's ids; and, with two or more, A's first id with B's others (a parent A owns, a child it does not).
      const variants = [concrete(o.path, b.ids)]
      if (names.length > 1) variants.push(concrete(o.path, { ...b.ids, [names[0]]: a.ids[names[0]] }))
      for (const path of variants) {
        const client = fresh(o, o.auth === 'tenant' ? a.t.key : undefined)
        const headers: Record<string, string> = o.auth === 'session' ? { authorization: `Session ${a.session}` } : {}
        const schema = o.op.requestBody?.content?.['application/json']?.schema
        // A body the parse step accepts, so the request reaches the lookup (tried from a few samples).
        const bodies = schema
          ? fc.sample(validOf(schema, { overrides: { agent_id: fc.constant(b.ids.agt) } }), { numRuns: 12, seed: 19 })
          : [undefined]
        let r: ApiResponse | undefined
        let sent: unknown
        for (const body of bodies) {
          sent = body
          r = await client.request(o.method.toUpperCase(), path, { body, headers })
          const parseRefusal = r.status === 400 || r.status === 413
          if (!parseRefusal) break
        }
        const what = `${o.method.toUpperCase()} ${path} with A's credential`
        expect(r!.status, `${what} → ${show(r!)}`).toBeLessThan(500)
        expect(r!.status, `${what} → ${show(r!)}`).toBeGreaterThanOrEqual(400)
        for (const s of secrets) expect(r!.text, what).not.toContain(s)
        if (r!.status === 400) refusedBeforeLookup.push(`${what}: ${r!.body.error.code} ${r!.body.error.field}`)
        else if (r!.status === 403) {
          // A refusal of the account or user itself (403 forbidden_account) is allowed only when an id that
          // exists nowhere gets the very same answer: no oracle of what B owns.
          expectEnvelope(r!, what, 403, ['forbidden_account'])
          const nowhere = path.replace(/\b([a-z]+)_([pud]?)\d+\b/g, '$1_$2999999999')
          const n = await client.request(o.method.toUpperCase(), nowhere, { body: sent, headers })
          expect(`${n.status} ${n.body?.error?.code}`, `${o.method.toUpperCase()} ${nowhere}`).toBe(
            '403 forbidden_account',
          )
        } else expectEnvelope(r!, what, 404)
      }
    }
    // Bodies no sample got past the parse step prove nothing about the lookup: there must be none.
    expect(refusedBeforeLookup.join('\n')).toBe('')
    expect(await b.snapshot()).toEqual(before)
  }, 180_000)
})

describe('API2 Broken Authentication', () => {
  it('every non-public operation answers 401 to no credential, a malformed one and a revoked one', async () => {
    verifies('security.owasp.authentication')
    const revoked = await master.post(`/users/${a.t.userId}/credentials`, { name: 'revoked', scopes: ['agents:read'] })
    expect(revoked.status, revoked.text).toBe(201)
    expect((await master.delete(`/credentials/${revoked.body.key_id}`)).status).toBe(204)
    // /widget/voice is a WebSocket: it authenticates the upgrade (voice-chat.test.ts), any plain request is 426.
    const guarded = ops.filter(
      (o) => o.auth !== 'public' && !o.op.tags?.includes('OAuth') && o.path !== '/widget/voice',
    )
    expect(guarded.length).toBeGreaterThan(100)
    for (const o of guarded) {
      const path = concrete(o.path, a.ids)
      const method = o.method.toUpperCase()
      const bad =
        o.auth === 'session'
          ? ['Session svc_ses_not-a-session', `Bearer ${a.t.key}`]
          : o.auth === 'widget'
            ? [`Bearer ${a.t.key}`]
            : [
                'Bearer svc_sk_live_forged-key-0000000000000000000000000000',
                `Bearer ${revoked.body.secret}`,
                'Basic Zm9vOmJhcg==',
              ]
      for (const authorization of [undefined, ...bad]) {
        const r = await fresh(o).request(method, path, {
          headers: {
            ...(authorization ? { authorization } : {}),
            ...(o.auth === 'widget' ? { origin: a.widget.origin } : {}),
          },
          ...(o.op.requestBody ? { body: {} } : {}),
        })
        // /mcp answers its challenge with the envelope too; the widget routes name the widget token.
        expectEnvelope(r, `${method} ${o.path} with ${authorization ?? 'no credential'}`, 401)
      }
    }
  }, 120_000)
})

describe('API3 Broken Object Property Level Authorization', () => {
  /** A response schema's properties, through the document's shared components ($ref) and envelopes (allOf). */
  const propertiesOf = (schema: any): Record<string, unknown> => {
    if (!schema) return {}
    if (schema.$ref) return propertiesOf(doc.components.schemas[schema.$ref.split('/').pop()])
    return Object.assign({}, ...(schema.allOf ?? []).map(propertiesOf), schema.properties ?? {})
  }

  it('read-only properties of the answer are unknown keys of the body: 400 unsupported_field, nothing written', async () => {
    verifies('security.owasp.property-level', 'errors.unsupported_field')
    const before = await a.snapshot()
    let tried = 0
    for (const o of ops.filter((x) => x.auth === 'tenant' || x.auth === 'session')) {
      const req = o.op.requestBody?.content?.['application/json']?.schema
      if (!req || req.additionalProperties !== false) continue
      const ok = Object.entries<any>(o.op.responses).find(([s]) => s.startsWith('2'))?.[1]
      const res = ok?.content?.['application/json']?.schema
      const readOnly = Object.keys(propertiesOf(res)).filter((k) => !(k in (req.properties ?? {})))
      for (const key of readOnly) {
        const value = key.endsWith('_id') ? b.ids.acc : key.endsWith('_at') ? '2020-01-01T00:00:00Z' : 'active'
        const path = concrete(o.path, a.ids)
        const headers: Record<string, string> = o.auth === 'session' ? { authorization: `Session ${a.session}` } : {}
        const r = await fresh(o, o.auth === 'tenant' ? a.t.key : undefined).request(o.method.toUpperCase(), path, {
          body: { [key]: value },
          headers,
        })
        expectEnvelope(r, `${o.method.toUpperCase()} ${o.path} {${key}}`, 400, ['unsupported_field'])
        expect(r.body.error.field).toBe(key)
        tried++
      }
    }
    expect(tried).toBeGreaterThan(100)
    expect(await a.snapshot()).toEqual(before)
  }, 120_000)

  it('no answer carries a password, a hash or a stored secret', async () => {
    verifies('security.owasp.property-level')
    const text = JSON.stringify(await a.snapshot())
    // content_hash (a SHA-256 of a document's public text) is the one hash a client is meant to see.
    expect(text).not.toMatch(/"(?!content_hash")[a-z_]*(password|_hash|hashed|secret_enc)[a-z_]*":/i)
    // A key's public prefix (key_prefix, a few characters) is shown; a whole secret never is.
    expect(
      text.match(/svc_(sk|mk)_live_[A-Za-z0-9_-]{20,}|svc_ses_[A-Za-z0-9_-]{20,}|svc_lnk_[A-Za-z0-9_-]{20,}/g),
    ).toBeNull()
    expect(text).not.toContain(a.t.key)
  })
})

describe('API4 Unrestricted Resource Consumption', () => {
  it('a JSON body over 2 MB is 413 on every write route; a page limit over the maximum is 400 invalid_limit on every list', async () => {
    verifies('security.owasp.resource-consumption', 'errors.payload_too_large')
    const big = JSON.stringify({ text: 'x'.repeat(2_100_000) })
    let writes = 0
    for (const o of ops.filter((x) => x.auth === 'tenant' && x.op.requestBody?.content?.['application/json'])) {
      const r = await fresh(o, a.t.key).request(o.method.toUpperCase(), concrete(o.path, a.ids), {
        raw: big,
        headers: { 'content-type': 'application/json' },
      })
      expectEnvelope(r, `${o.method.toUpperCase()} ${o.path} 2.1 MB`, 413, ['payload_too_large'])
      writes++
    }
    expect(writes).toBeGreaterThan(25)
    let lists = 0
    for (const o of ops.filter((x) => x.method === 'get' && (x.auth === 'tenant' || x.auth === 'master'))) {
      const limit = (o.op.parameters ?? []).find((p: any) => p.in === 'query' && p.name === 'limit')
      if (!limit) continue
      const key = o.auth === 'tenant' ? a.t.key : masterKey
      const max = limit.schema.maximum
      for (const value of [...(max ? [String(max + 1)] : []), '1000000000', '-1', '0', '1.5']) {
        const r = await fresh(o, key).get(`${concrete(o.path, a.ids)}?limit=${value}`)
        expectEnvelope(r, `GET ${o.path}?limit=${value}`, 400)
        expect(r.body.error.field).toBe('limit')
      }
      const ok = await fresh(o, key).get(`${concrete(o.path, a.ids)}?limit=${max ?? 1}`)
      expect(ok.status, `GET ${o.path}?limit=${max ?? 1} → ${show(ok)}`).toBeLessThan(300)
      lists++
    }
    expect(lists).toBeGreaterThan(20)
  }, 120_000)
})

describe('API5 Broken Function Level Authorization', () => {
  it('every master-only operation refuses a tenant key with every personal scope (403) and a dashboard session (401)', async () => {
    verifies('security.owasp.function-level', 'admin.master-only')
    const masterOnly = ops.filter((o) => o.auth === 'master')
    const paths = masterOnly.map((o) => o.path)
    // Derived from the document: the Operator surface, /users and /audit at least.
    expect(paths).toEqual(expect.arrayContaining(['/admin/config', '/admin/customers/{usr}', '/users', '/audit']))
    for (const o of masterOnly) {
      const path = concrete(o.path, b.ids)
      const body = o.op.requestBody ? {} : undefined
      const method = o.method.toUpperCase()
      const tenant = await fresh(o, a.t.key).request(method, path, { body })
      expectEnvelope(tenant, `${method} ${o.path} with a tenant key`, 403, [
        'forbidden',
        'insufficient_scope',
        'forbidden_account',
      ])
      const session = await fresh(o).request(method, path, { body, headers: { authorization: `Session ${a.session}` } })
      expectEnvelope(session, `${method} ${o.path} with a session`, 401)
    }
    // Nor can a tenant mint itself a key that reaches them.
    const dash = createApi(origin)
    const minted = await dash.post(
      '/api/api-keys',
      { name: 'escalate', scopes: ['users:manage'] },
      { headers: { authorization: `Session ${a.session}` } },
    )
    expectEnvelope(minted, 'POST /api/api-keys users:manage', 400)
    const own = await a.t.api.post(`/users/${a.t.userId}/credentials`, { name: 'x', scopes: ['users:manage'] })
    expectEnvelope(own, 'POST /users/{usr}/credentials users:manage with a tenant key', 400, ['invalid_scope'])
  }, 120_000)
})

describe('API6 Unrestricted Access to Sensitive Business Flows', () => {
  it('failed authentications from one client are limited (429) before a key can be guessed', async () => {
    verifies('security.owasp.business-flows')
    const guesser = createApi(base)
    const answers: number[] = []
    for (let i = 0; i < 25; i++)
      answers.push(
        (await guesser.get(`/agents/${a.ids.agt}`, { key: `svc_sk_live_guess${i}${'0'.repeat(40)}` })).status,
      )
    expect(answers.slice(0, 20).every((s) => s === 401)).toBe(true)
    expect(answers.slice(20)).toContain(429)
    // Once limited, even a right key from that client waits: the limit is per client, not per guess.
    const r = await guesser.get(`/agents/${a.ids.agt}`, { key: 'svc_sk_live_guess-after' })
    expectEnvelope(r, 'a guess after the limit', 429, ['rate_limited'])
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
  })
})

describe('API7 Server Side Request Forgery', () => {
  let inside: Server
  let insidePort: number
  const insideHits: string[] = []
  let relay: TestSite

  beforeAll(async () => {
    // A service on 127.0.0.2: loopback, not the allow-listed 127.0.0.1, so the guard must refuse it.
    inside = createServer((req, res) => {
      insideHits.push(req.url ?? '/')
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><p>internal secret page</p></body></html>')
    })
    await new Promise<void>((r) => inside.listen(0, '127.0.0.2', r))
    insidePort = (inside.address() as AddressInfo).port
    relay = await serveSite({
      '/to-inside': { status: 302, location: `http://127.0.0.2:${insidePort}/secret` },
      '/to-mapped': { status: 302, location: `http://[::ffff:127.0.0.2]:${insidePort}/secret` },
      '/to-decimal': { status: 302, location: `http://2130706434:${insidePort}/secret` },
      '/to-localhost': { status: 301, location: `http://localhost:${insidePort}/secret` },
      '/to-metadata': { status: 307, location: 'http://169.254.169.254/latest/meta-data/' },
    })
  })

  afterAll(async () => {
    await relay?.close()
    await new Promise((r) => inside?.close(r))
  })

  const hostsFile = (): string[] => {
    try {
      return readFileSync('/etc/hosts', 'utf8')
        .split('\n')
        .map((l) => l.replace(/#.*/, '').trim().split(/\s+/))
        .filter(([ip, ...names]) => /^(127\.|10\.|192\.168\.|::1$)/.test(ip ?? '') && names.length)
        .flatMap(([, ...names]) => names)
        .filter((n) => n !== '127.0.0.1')
    } catch {
      return []
    }
  }

  it('refuses private hosts however written, at every URL the service fetches (400 invalid_url)', async () => {
    verifies('security.owasp.ssrf')
    const p = insidePort
    const voice = (await a.t.api.get('/voices')).body.data[0].voice_id
    const urls = [
      `http://127.0.0.2:${p}/`,
      `http://2130706434:${p}/`, // 127.0.0.2 in decimal
      `http://0177.0.0.2:${p}/`, // octal
      `http://0x7f000002:${p}/`, // hex
      `http://127.2:${p}/`, // short form
      `http://[::ffff:127.0.0.2]:${p}/`, // IPv4-mapped IPv6
      `http://[::ffff:7f00:2]:${p}/`,
      `http://[::1]:${p}/`,
      `http://[fd00::1]/`,
      `http://[fe80::1]/`,
      'http://10.0.0.1/',
      'http://167772161/', // 10.0.0.1 in decimal
      'http://012.0.0.1/', // 10.0.0.1 in octal
      'http://192.168.1.1/',
      'http://172.16.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://0.0.0.0/',
      'http://0/',
      'http://100.64.0.1/',
      `http://localhost:${p}/`,
      `http://localhost.:${p}/`,
      'http://metadata.google.internal/',
      'file:///etc/passwd',
      'gopher://127.0.0.2:70/',
      `http://user:pass@127.0.0.2:${p}/`,
      // Names that resolve to a loopback address here (/etc/hosts); no network DNS in tests.
      ...hostsFile().map((n) => `http://${n}:${p}/`),
    ]
    for (const url of urls) {
      const hook = await a.t.api.post('/webhooks/endpoints', { url, events: ['conversation.ended'] })
      expectEnvelope(hook, `webhook ${url}`, 400, ['invalid_url', 'validation_error'])
      expect(hook.body.error.field).toBe('url')
      const build = await a.t.api.post(`/accounts/${a.t.accountId}/agents/build`, {
        website_url: url,
        voice_id: voice,
      })
      expectEnvelope(build, `build ${url}`, 400, ['invalid_url', 'validation_error'])
      expect(build.body.error.field).toBe('website_url')
      const page = await a.t.api.post(`/agents/${a.ids.agt}/kb/documents`, { url, mode: 'page' })
      expect([400, 202], `kb page ${url} → ${show(page)}`).toContain(page.status)
      if (page.status === 202) await expectFailed(page.body.doc_id, url)
    }
    expect(insideHits).toEqual([])
  }, 120_000)

  async function expectFailed(docId: string, what: string) {
    for (let i = 0; i < 100; i++) {
      const d = await a.t.api.get(`/agents/${a.ids.agt}/kb/documents/${docId}`)
      if (d.body.status !== 'processing') {
        expect(d.body.status, `${what}: ${JSON.stringify(d.body)}`).toBe('failed')
        return d.body
      }
      await sleep(100)
    }
    throw new Error(`${what}: still processing`)
  }

  it('follows no redirect from an allowed site to a private address (page fetch and webhook delivery)', async () => {
    verifies('security.owasp.ssrf')
    for (const path of ['/to-inside', '/to-mapped', '/to-decimal', '/to-localhost', '/to-metadata']) {
      const page = await a.t.api.post(`/agents/${a.ids.agt}/kb/documents`, {
        url: `${relay.origin}${path}`,
        mode: 'page',
      })
      expect(page.status, show(page)).toBe(202)
      await expectFailed(page.body.doc_id, path)
    }
    const hook = await a.t.api.post('/webhooks/endpoints', {
      url: `${relay.origin}/to-inside`,
      events: ['conversation.ended'],
    })
    expect(hook.status, show(hook)).toBe(201)
    await a.t.api.post(`/webhooks/endpoints/${hook.body.endpoint_id}/test`)
    await sleep(1500)
    expect(relay.hits.filter((h) => h.startsWith('/to-')).length).toBeGreaterThan(5)
    expect(insideHits).toEqual([])
    expect((await a.t.api.delete(`/webhooks/endpoints/${hook.body.endpoint_id}`)).status).toBe(204)
  }, 60_000)
})

describe('API8 Security Misconfiguration', () => {
  it('every answer carries no-store, nosniff and a request id, and no stack or path leaks', async () => {
    verifies('security.owasp.misconfiguration', 'conventions.no-store')
    const samples: ApiResponse[] = [
      await createApi(base).get('/health'),
      await createApi(base).get('/agents'),
      await a.t.api.get(`/agents/${a.ids.agt}`),
      await a.t.api.get('/nowhere/at/all'),
      await a.t.api.request('PATCH', `/agents/${a.ids.agt}`, {
        raw: '{"a":',
        headers: { 'content-type': 'application/json' },
      }),
      await a.t.api.request('PUT', `/agents/${a.ids.agt}`),
    ]
    for (const r of samples) {
      expect(r.headers.get('cache-control')).toContain('no-store')
      expect(r.headers.get('x-content-type-options')).toBe('nosniff')
      expect(r.headers.get('x-request-id')).toBeTruthy()
      expect(r.headers.get('x-powered-by')).toBeNull()
      expect(r.text).not.toMatch(/\bat [\w.]+ \(|node_modules|\/work\/|\.output\/|SELECT |stack/i)
    }
    expect(samples[5].status).toBe(405)
  })

  it('the REST API grants no CORS to a foreign Origin; /mcp refuses one; TRACE is refused', async () => {
    verifies('security.owasp.misconfiguration')
    const evil = { origin: 'https://evil.example' }
    const pre = await fetch(`${base}/agents`, {
      method: 'OPTIONS',
      headers: { ...evil, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    })
    expect(pre.status).toBeLessThan(500)
    expect(pre.headers.get('access-control-allow-origin')).toBeNull()
    expect(pre.headers.get('access-control-allow-credentials')).toBeNull()
    const get = await a.t.api.get(`/agents/${a.ids.agt}`, { headers: evil })
    expect(get.status).toBe(200)
    expect(get.headers.get('access-control-allow-origin')).toBeNull()
    const widget = await fetch(`${base}/widget/config`, { headers: { ...evil, 'x-svc-widget-token': a.widget.token } })
    expect(widget.status).toBe(403)
    expect(widget.headers.get('access-control-allow-origin')).toBeNull()
    const mcp = await a.t.api.post(
      '/mcp',
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { headers: { ...evil, accept: 'application/json, text/event-stream' } },
    )
    expectEnvelope(mcp, 'POST /mcp from a foreign Origin', 403, ['forbidden_origin'])
    const trace = await fetch(`${base}/health`, { method: 'TRACE' }).catch(() => null)
    if (trace) expect([400, 404, 405, 501]).toContain(trace.status)
  })
})

describe('API9 Improper Inventory Management', () => {
  it('every documented operation is served, every other method on its path is 405 with Allow, and probes are 404', async () => {
    verifies('security.owasp.inventory', 'errors.method_not_allowed', 'errors.not_found')
    const byPath = new Map<string, Op[]>()
    for (const o of ops) byPath.set(o.path, [...(byPath.get(o.path) ?? []), o])
    const pattern = (p: string) => new RegExp(`^${p.replace(/\{\w+\}/g, '[^/]+')}$`)
    /** Methods documented on every path a concrete URL matches (/accounts/{acc}/agents/build also matches {agt}). */
    const documented = (url: string) => ops.filter((o) => pattern(o.path).test(url)).map((o) => o.method.toUpperCase())
    for (const [path, list] of byPath) {
      const url = concrete(path, a.ids)
      const served = list.map((o) => o.method.toUpperCase())
      // Served: a documented operation never answers the generic unknown-route 404.
      for (const o of list.filter((x) => x.auth !== 'public')) {
        const r = await fresh(o).request(o.method.toUpperCase(), url, o.op.requestBody ? { body: {} } : {})
        expect(r.status, `${o.method.toUpperCase()} ${path} → ${show(r)}`).not.toBe(404)
      }
      // Nothing else: a method the document does not list on the path is 405, and Allow lists the served ones.
      const other = ['PUT', 'PATCH', 'DELETE', 'POST'].find((m) => !served.includes(m))
      // /mcp answers every method itself (JSON-RPC); /widget/voice is a WebSocket (426 to any plain request).
      if (!other || path === '/mcp' || path === '/widget/voice') continue
      const r = await fresh(list[0]).request(other, url)
      expect(r.status, `${other} ${path} → ${show(r)}`).toBe(405)
      const allow = (r.headers.get('allow') ?? '').split(/,\s*/).filter((m) => m && m !== 'HEAD' && m !== 'OPTIONS')
      expect(allow, `Allow on ${path}`).toEqual(expect.arrayContaining(served))
      for (const m of allow) expect(documented(url), `${m} in Allow on ${path}`).toContain(m)
    }
    for (const probe of [
      '/v1/internal',
      '/v1/debug',
      '/v1/admin',
      '/v1/graphql',
      '/v1/users/usr_1/password',
      '/v2/users',
      '/v0/users',
      '/api/v2/users',
      '/.env',
      '/.git/config',
      '/_nitro/tasks',
      '/_nitro/openapi.json',
      '/_scalar',
      '/_swagger',
      '/v1/openapi.json.bak',
    ]) {
      const r = await fetch(origin + probe, { headers: { authorization: `Bearer ${masterKey}` } })
      expect(r.status, probe).toBe(404)
    }
  }, 120_000)
})

describe('API10 Unsafe Consumption of APIs', () => {
  let hostile: TestSite
  beforeAll(async () => {
    const bomb = gzipSync(Buffer.alloc(60 * 1024 * 1024, 0x61))
    const deep = `<html><body>${'<div>'.repeat(100_000)}deep${'</div>'.repeat(100_000)}</body></html>`
    hostile = await serveSite({
      '/deep': { body: deep },
      // The nesting Readability chokes on: 1,000 levels held the process for 13 s before the bound.
      '/deep-1000': {
        body: `<html><body>${'<div>'.repeat(1000)}<p>Deep text.</p>${'</div>'.repeat(1000)}</body></html>`,
      },
      '/garbage': { body: '\u0000\uffff\ud800'.repeat(10_000), type: 'text/html; charset=utf-8' },
    })
    // The gzip bomb needs its own header: served by a bare server.
    const srv = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(bomb),
    )
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
    bombUrl = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/bomb`
    closeBomb = () => new Promise((r) => srv.close(() => r()))
  })
  let bombUrl = ''
  let closeBomb: () => Promise<void> = async () => {}
  afterAll(async () => {
    await hostile?.close()
    await closeBomb()
  })

  it('a gzip bomb, a page nested 100,000 deep and binary garbage from a third party end in a clear state, not a 5xx', async () => {
    verifies('security.owasp.unsafe-consumption')
    for (const url of [bombUrl, `${hostile.origin}/deep`, `${hostile.origin}/deep-1000`, `${hostile.origin}/garbage`]) {
      const t0 = performance.now()
      const r = await a.t.api.post(`/agents/${a.ids.agt}/kb/documents`, { url, mode: 'page' })
      expect(r.status, show(r)).toBe(202)
      let d: ApiResponse = r
      for (let i = 0; i < 300 && d.body.status === 'processing'; i++) {
        await sleep(100)
        d = await a.t.api.get(`/agents/${a.ids.agt}/kb/documents/${r.body.doc_id}`)
        expect(d.status).toBe(200)
      }
      expect(['indexed', 'failed'], url).toContain(d.body.status)
      // A clear failure names what was wrong with the page; "an internal error" was a NUL the store refused.
      expect(d.body.error ?? '', url).not.toMatch(/internal error/i)
      expect(performance.now() - t0, url).toBeLessThan(10_000)
      expect((await createApi(base).get('/health')).status).toBe(200)
    }
  }, 120_000)
})
