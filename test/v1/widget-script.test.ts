// The embeddable widget script (GET /widget.js) and the development-only demo page (GET /widget-demo),
// issue 17 parts 1 and 4. The script itself runs in a browser (browser tests come later); here: how it is
// served, its size budget and contents, and the demo page in development and production.
import { request } from 'node:http'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi } from '../helpers/api'
import { startSeededServer, type SeededServer } from '../helpers/agents'
import { startServer, type TestServer } from '../helpers/server'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const origin = inject('origin')
const get = (path: string, headers: Record<string, string> = {}, at = origin) =>
  fetch(at + path, { headers: { 'accept-encoding': 'identity', ...headers } })

describe('GET /widget.js', () => {
  it('answers the script without a key, short-lived on the unversioned URL, with an ETag', async () => {
    verifies('widget.script')
    const r = await get('/widget.js')
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('application/javascript; charset=utf-8')
    expect(r.headers.get('cache-control')).toBe('public, max-age=300')
    expect(r.headers.get('etag')).toMatch(/^"[0-9a-f]{12}"$/)
    expect(r.headers.get('content-encoding')).toBeNull()
    const code = await r.text()
    expect(code.length).toBeGreaterThan(1000)
    // An IIFE that reads its token from the snippet and builds a shadow root.
    expect(code.startsWith('(()=>{') || code.startsWith('"use strict";(()=>{')).toBe(true)
    expect(code).toContain('attachShadow')
    expect(code).toContain('x-svc-widget-token')
    expect(code).toContain('/v1/widget/conversations')
    expect(code).toContain('sessionStorage')
  })

  it('is under 30 KB gzipped and carries no secret', async () => {
    verifies('widget.script')
    const code = await (await get('/widget.js')).text()
    expect(gzipSync(code).length).toBeLessThan(30 * 1024)
    expect(code).not.toMatch(/svc_(sk|mk)_live_|svc_ses_|svc_at_|svc_rt_|whsec_|wpk_[A-Za-z0-9_-]{8}/)
  })

  it('answers 304 to a matching If-None-Match and gzip when asked', async () => {
    verifies('widget.script')
    const first = await get('/widget.js')
    const etag = first.headers.get('etag')!
    const again = await get('/widget.js', { 'if-none-match': etag })
    expect(again.status).toBe(304)
    expect(again.headers.get('etag')).toBe(etag)
    expect(await again.text()).toBe('')
    expect((await get('/widget.js', { 'if-none-match': '"other"' })).status).toBe(200)
    // fetch decompresses; the header shows what was sent.
    const gz = await fetch(origin + '/widget.js', { headers: { 'accept-encoding': 'gzip' } })
    expect(gz.headers.get('content-encoding')).toBe('gzip')
    expect(gz.headers.get('vary')).toContain('Accept-Encoding')
    expect(await gz.text()).toBe(await first.text())
  })

  it('serves the current version immutable at /widget.js?v=<version>, any other v short-lived', async () => {
    verifies('widget.script')
    const version = (await get('/widget.js')).headers.get('etag')!.replaceAll('"', '')
    const pinned = await get(`/widget.js?v=${version}`)
    expect(pinned.status).toBe(200)
    expect(pinned.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    const stale = await get('/widget.js?v=000000000000')
    expect(stale.status).toBe(200)
    expect(stale.headers.get('cache-control')).toBe('public, max-age=300')
    const head = await fetch(origin + '/widget.js', { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-type')).toContain('javascript')
  })

  it('is not an API route: absent from the OpenAPI document, other methods 405', async () => {
    verifies('widget.script')
    const doc = (await createApi(inject('base')).get('/openapi.json')).body
    expect(doc.paths['/widget.js']).toBeUndefined()
    expect(doc.paths['/widget-demo']).toBeUndefined()
    expect((await fetch(origin + '/widget.js', { method: 'POST' })).status).toBe(405)
  })
})

describe('GET /widget-demo (development)', () => {
  let seeded: SeededServer<{ t: Tenant }>
  let agt: string
  beforeAll(async () => {
    seeded = await startSeededServer({
      // The demo page is off unless SVC_WIDGET_DEMO=1 (decisions "Abuse and cost (issue 30)").
      env: { SVC_WIDGET_DEMO: '1' },
      prepare: async (m) => ({ t: await createTenant(m) }),
      agents: ({ t }) => [{ accountId: t.accountId, name: 'Demo <Agent>' }],
    })
    agt = seeded.agentIds[0]
  })
  afterAll(async () => {
    await seeded?.server.stop('SIGKILL')
  })

  it('asks for an agent id, 404s an unknown agent and 409s an agent without a token, as HTML', async () => {
    verifies('widget.demo')
    const at = seeded.server.origin
    const none = await get('/widget-demo', {}, at)
    expect(none.status).toBe(400)
    expect(none.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(await none.text()).toContain('/widget-demo?agent=agt_')
    expect((await get('/widget-demo?agent=bogus', {}, at)).status).toBe(400)
    expect((await get('/widget-demo?agent=agt_999999', {}, at)).status).toBe(404)
    const noToken = await get(`/widget-demo?agent=${agt}`, {}, at)
    expect(noToken.status).toBe(409)
    expect(await noToken.text()).toContain('allowed_domains')
  })

  it("embeds the agent's snippet with its appearance, and warns when the host is not allowed", async () => {
    verifies('widget.demo')
    const api = seeded.as(seeded.prepared.t.key)
    const w = await api.patch(`/agents/${agt}/widget`, {
      allowed_domains: ['localhost'],
      appearance: { primary_color: '#112233', title: 'Ask "us"' },
    })
    expect(w.status).toBe(200)
    const token = (await api.get(`/agents/${agt}/widget`)).body.public_token as string
    expect(token).toMatch(/^wpk_/)
    const r = await get(`/widget-demo?agent=${agt}`, {}, seeded.server.origin)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const html = await r.text()
    expect(html).toContain(
      `<script src="${seeded.server.origin}/widget.js" data-token="${token}" data-primary-color="#112233" data-title="Ask &quot;us&quot;" async></script>`,
    )
    expect(html).toContain('Demo &lt;Agent&gt;')
    expect(html).not.toContain('Demo <Agent>')
    // Served on 127.0.0.1, which allowed_domains cannot hold: the page says to use localhost.
    expect(html).toContain("not in the agent's allowed domains")
    // The same page opened as http://localhost:<port> (fetch does not let a test set Host).
    const onLocalhost = await new Promise<{ status: number; body: string }>((done, fail) => {
      const url = new URL(`${seeded.server.origin}/widget-demo?agent=${agt}`)
      request(url, { headers: { host: `localhost:${url.port}` } }, (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (c) => (body += c))
        res.on('end', () => done({ status: res.statusCode!, body }))
      })
        .on('error', fail)
        .end()
    })
    expect(onLocalhost.status).toBe(200)
    expect(onLocalhost.body).toContain('data-token="' + token)
    expect(onLocalhost.body).not.toContain('not in the agent')
  })
})

describe('GET /widget-demo (production)', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ env: { SVC_ENV: 'production', SVC_WIDGET_DEMO: '1' } })
  })
  afterAll(async () => {
    await server?.stop('SIGKILL')
  })

  it('is 404 not_found under SVC_ENV=production even with SVC_WIDGET_DEMO=1, while /widget.js is served', async () => {
    verifies('widget.demo', 'widget.script')
    const r = await get('/widget-demo?agent=agt_1', {}, server.origin)
    expect(r.status).toBe(404)
    expect((await r.json()).error.code).toBe('not_found')
    expect((await get('/widget.js', {}, server.origin)).status).toBe(200)
  })
})
