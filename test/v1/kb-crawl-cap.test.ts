// Two site crawls of one agent started at once share the plan's per-agent page cap: each page is
// admitted under the agent's row lock, so together they never store more than the cap (trial 50).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { html, serveSite, type TestSite, type Page } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { sleep } from '../helpers/wait'
import { verifies } from '../requirements'

const master = createApi(inject('base'), inject('masterKey'))
let t: Tenant
let home: TestSite
let big: TestSite
let agentId: string

beforeAll(async () => {
  t = await createTenant(master, { plan: 'trial' })
  home = await serveSite({ '/': { body: html('Fly High', '<p>Fly High sells kites.</p>') } })
  // 120 pages, all linked from the start page: either crawl alone could fill the whole cap.
  const pages: Record<string, Page> = {
    '/': {
      body: html(
        'Kite Index',
        `<p>All our kites.</p>${Array.from({ length: 120 }, (_, i) => `<a href="/k/${i}">Kite ${i}</a>`).join(' ')}`,
      ),
    },
  }
  for (let i = 0; i < 120; i++)
    pages[`/k/${i}`] = { body: html(`Kite ${i}`, `<p>Kite model ${i} flies in winds of force ${i % 6}.</p>`) }
  big = await serveSite(pages)
  agentId = await buildAgent(t.api, t.accountId, `${home.origin}/`)
})
afterAll(async () => {
  await home?.close()
  await big?.close()
})

const pageCount = async () => {
  const r = await t.api.get(`/agents/${agentId}/kb/documents?kind=page&limit=100`)
  expect(r.status).toBe(200)
  return (r.body.data as unknown[]).length + (r.body.pagination?.next_cursor ? 100 : 0)
}

describe('parallel site crawls', () => {
  it('two crawls of one agent started at once stop together at the plan page cap', async () => {
    verifies('kb.crawl.parallel-cap')
    const [a, b] = await Promise.all([
      t.api.post(`/agents/${agentId}/kb/documents`, { url: `${big.origin}/`, mode: 'site' }),
      t.api.post(`/agents/${agentId}/kb/documents`, { url: `${big.origin}/?again`, mode: 'site' }),
    ])
    expect(a.status).toBe(202)
    expect(b.status).toBe(202)
    // Both crawls are done once the site has had no request for 3 s (they may run on any instance).
    let last = -1
    for (let quiet = 0, i = 0; quiet < 15 && i < 600; i++) {
      await sleep(200)
      quiet = big.hits.length === last ? quiet + 1 : 0
      last = big.hits.length
    }
    const total = await pageCount()
    // The build's page plus the crawled ones: never past the trial plan's 50, and the cap was reached.
    expect(total).toBeLessThanOrEqual(50)
    expect(total).toBeGreaterThanOrEqual(45)
    const more = await t.api.post(`/agents/${agentId}/kb/documents`, { url: `${big.origin}/k/1`, mode: 'page' })
    expect(more.status).toBe(403)
  }, 120_000)
})
