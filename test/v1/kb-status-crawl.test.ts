// kb/status shows a site crawl while it runs in this process, then reads idle again.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi } from '../helpers/api'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'
import { buildAgent } from '../helpers/build'
import { until } from '../helpers/wait'

const master = createApi(inject('base'), inject('masterKey'))
let t: Tenant
let home: TestSite
let slow: TestSite
let agentId: string

beforeAll(async () => {
  t = await createTenant(master)
  home = await serveSite({ '/': { body: html('Kite Shop', '<p>Kite Shop sells kites in Brighton.</p>') } })
  slow = await serveSite({
    '/': { body: html('Wind Facts', '<p>Wind facts index.</p><a href="/a">A</a> <a href="/b">B</a>') },
    '/a': { delayMs: 1500, body: html('A', '<p>Beaufort force 4 is a moderate breeze.</p>') },
    '/b': { delayMs: 1500, body: html('B', '<p>Kites fly best between force 2 and force 5.</p>') },
  })
  agentId = await buildAgent(t.api, t.accountId, `${home.origin}/`)
})
afterAll(async () => {
  await home?.close()
  await slow?.close()
})

describe('kb/status crawl', () => {
  it('reads running with the crawl id while a site crawl runs, then idle, with the pages stored', async () => {
    verifies('kb.status', 'kb.crawl')
    expect((await t.api.get(`/agents/${agentId}/kb/status`)).body.crawl).toMatchObject({
      status: 'idle',
      crawl_id: null,
    })
    const r = await t.api.post(`/agents/${agentId}/kb/documents`, { url: `${slow.origin}/`, mode: 'site' })
    expect(r.status).toBe(202)
    expect(r.body.doc_id).toBeNull()
    let seen: any
    for (let i = 0; i < 40 && seen?.status !== 'running'; i++) {
      seen = (await t.api.get(`/agents/${agentId}/kb/status`)).body.crawl
      if (seen.status !== 'running') await new Promise((res) => setTimeout(res, 100))
    }
    expect(seen).toMatchObject({ status: 'running', crawl_id: r.body.crawl_id })
    const crawl = await until('the crawl to end', async () => {
      const c = (await t.api.get(`/agents/${agentId}/kb/status`)).body.crawl
      return c.status === 'idle' && c
    })
    expect(crawl.status).toBe('idle')
    const pages = (await t.api.get(`/agents/${agentId}/kb/documents?kind=page&limit=100`)).body.data
    expect(pages.filter((d: any) => d.url?.startsWith(slow.origin))).toHaveLength(3)
    const status = (await t.api.get(`/agents/${agentId}/kb/status`)).body
    expect(status.summary.stale).toBe(true)
    expect(status.summary.pending_sources).toBeGreaterThanOrEqual(3)
    expect(status.vector_sync).toBeNull()
  })
})
