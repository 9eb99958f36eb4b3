// Knowledge sync (issue 32; decisions "Knowledge sync") over HTTP against local sites that count their
// requests: the kb_sync setting, the sync resource, conditional requests and sitemap lastmod on an unchanged
// site, one changed page re-ingested alone, navigation and footer changes counted unchanged, a new linked
// page added, 404 by both deletion values, the summary rebuilt only after a change, 409 sync_in_progress,
// kb.synced, and the crawl's site rule, robots.txt and bounds. The two-instance schedule test is in
// kb-sync-schedule.test.ts (PostgreSQL only).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, type Api } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { startReceiver, type Receiver } from '../helpers/receiver'
import { etagOf, serveSite, type Page, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { sleep, until } from '../helpers/wait'
import { verifies } from '../requirements'

const base = inject('base')
const master = createApi(base, inject('masterKey'))

/** A page whose navigation and footer are given apart from its main text. */
const page = (title: string, main: string, nav = '<a href="/">Home</a>', footer = '© Example 2026') => ({
  body: `<!doctype html><html><head><title>${title}</title></head><body><nav>${nav}</nav><main>${main}</main><footer>${footer}</footer></body></html>`,
})

const NAV = '<a href="/">Home</a> <a href="/hours">Hours</a> <a href="/prices">Prices</a>'

function bakery(): Record<string, Page> {
  return {
    '/': page(
      'Crumb Bakery',
      '<h1>Crumb Bakery</h1><p>Crumb Bakery bakes sourdough bread and rye loaves in Leeds every morning.</p>',
      NAV,
    ),
    '/hours': page(
      'Hours',
      '<h1>Opening hours</h1><p>We open at 7 am and close at 6 pm from Monday to Saturday.</p>',
      NAV,
    ),
    '/prices': page('Prices', '<h1>Prices</h1><p>A sourdough loaf costs 4 pounds and a rye loaf 5 pounds.</p>', NAV),
  }
}

let t: Tenant
let rx: Receiver

beforeAll(async () => {
  t = await createTenant(master)
  rx = await startReceiver()
  const hook = await t.api.post('/webhooks/endpoints', { url: rx.url('/synced'), events: ['kb.synced'] })
  expect(hook.status, hook.text).toBe(201)
})
afterAll(async () => {
  await rx?.close()
})

/** A sync as GET reads it, without the response envelope's meta. */
async function readSync(api: Api, agt: string, id: string) {
  const g = await api.get(`/agents/${agt}/kb/syncs/${id}`)
  expect(g.status, g.text).toBe(200)
  const { meta: _meta, ...sync } = g.body
  return sync
}

async function sync(api: Api, agt: string) {
  const r = await api.post(`/agents/${agt}/kb/sync`)
  expect(r.status, r.text).toBe(202)
  return until(
    `sync ${r.body.sync_id}`,
    async () => {
      const g = await readSync(api, agt, r.body.sync_id)
      return g.status !== 'running' && g
    },
    60_000,
  )
}

async function pages(api: Api, agt: string): Promise<Record<string, { doc_id: string; updated_at: string }>> {
  const r = await api.get(`/agents/${agt}/kb/documents?kind=page&limit=100`)
  expect(r.status).toBe(200)
  return Object.fromEntries(r.body.data.map((d: { url: string }) => [new URL(d.url).pathname, d]))
}

const summaryOf = async (api: Api, agt: string) => (await api.get(`/agents/${agt}/kb/summary`)).body

describe('kb_sync setting', () => {
  it('reads the default, merges a patch key by key without a version bump, null restores it, bad values are 400', async () => {
    verifies('fresh.sync.setting')
    const site = await serveSite(bakery(), { validators: true })
    try {
      const agt = await buildAgent(t.api, t.accountId, `${site.origin}/`)
      const a = await t.api.get(`/agents/${agt}`)
      expect(a.body.kb_sync).toEqual({ schedule: 'off', deletion: 'keep', reindex: true })
      const p = await t.api.patch(`/agents/${agt}`, { kb_sync: { deletion: 'remove' } })
      expect(p.status, p.text).toBe(200)
      expect(p.body.agent_version).toBe(a.body.agent_version)
      expect((await t.api.get(`/agents/${agt}`)).body.kb_sync).toEqual({
        schedule: 'off',
        deletion: 'remove',
        reindex: true,
      })
      await t.api.patch(`/agents/${agt}`, { kb_sync: { reindex: false } })
      expect((await t.api.get(`/agents/${agt}`)).body.kb_sync).toEqual({
        schedule: 'off',
        deletion: 'remove',
        reindex: false,
      })
      await t.api.patch(`/agents/${agt}`, { kb_sync: null })
      expect((await t.api.get(`/agents/${agt}`)).body.kb_sync).toEqual({
        schedule: 'off',
        deletion: 'keep',
        reindex: true,
      })
      for (const bad of [{ schedule: 'hourly' }, { reindex: 'yes' }, { deletion: 'archive' }, 'daily']) {
        const r = await t.api.patch(`/agents/${agt}`, { kb_sync: bad })
        expect(r.status, JSON.stringify(bad)).toBe(400)
        expect(r.body.error.code).toBe('validation_error')
        expect(JSON.stringify(r.body.error)).toContain('kb_sync')
      }
      // Another key: 400 unsupported_field, as for the other settings objects.
      const extra = await t.api.patch(`/agents/${agt}`, { kb_sync: { when: 'daily' } })
      expect(extra.status).toBe(400)
      expect(extra.body.error.code).toBe('unsupported_field')
      expect((await t.api.get(`/agents/${agt}`)).body.kb_sync).toEqual({
        schedule: 'off',
        deletion: 'keep',
        reindex: true,
      })
    } finally {
      await site.close()
    }
  }, 120_000)
})

describe('a site synced again', () => {
  let site: TestSite
  let pagesOf: Record<string, Page>
  let agt: string
  const pathsSince = (n: number) =>
    site.requests.slice(n).filter((r) => !r.path.endsWith('.txt') && !r.path.endsWith('.xml'))

  beforeAll(async () => {
    pagesOf = bakery()
    site = await serveSite(pagesOf, { validators: true })
    agt = await buildAgent(t.api, t.accountId, `${site.origin}/`)
  }, 120_000)
  afterAll(() => site?.close())

  it('an unchanged site: every page asked with its ETag answers 304, nothing is re-ingested or rebuilt', async () => {
    verifies('fresh.sync.unchanged', 'fresh.sync.resource', 'fresh.sync.summary')
    const before = await pages(t.api, agt)
    expect(Object.keys(before).sort()).toEqual(['/', '/hours', '/prices'])
    const summary = await summaryOf(t.api, agt)
    const mark = site.requests.length
    const post = await t.api.post(`/agents/${agt}/kb/sync`)
    expect(post.status, post.text).toBe(202)
    expect(post.body).toMatchObject({
      sync_id: expect.stringMatching(/^sync_\d+$/),
      agent_id: agt,
      trigger: 'manual',
      status: 'running',
    })
    const s = await until('sync done', async () => {
      const g = await readSync(t.api, agt, post.body.sync_id)
      return g.status !== 'running' && g
    })
    expect(s).toMatchObject({
      status: 'succeeded',
      pages_checked: 3,
      not_modified: 3,
      unchanged: 0,
      added: [],
      changed: [],
      removed: [],
      summary_rebuild: false,
      finished_at: expect.any(String),
    })
    const asked = pathsSince(mark)
    expect(asked.map((r) => r.path).sort()).toEqual(['/', '/hours', '/prices'])
    for (const r of asked) expect(r.headers['if-none-match'], r.path).toBe(etagOf(pagesOf[r.path].body ?? ''))
    expect(await pages(t.api, agt)).toEqual(before)
    expect((await summaryOf(t.api, agt)).version).toBe(summary.version)
    // Listed newest first, and readable only through its own agent and account.
    const list = await t.api.get(`/agents/${agt}/kb/syncs`)
    expect(list.status).toBe(200)
    expect(list.body.data[0]).toEqual(s)
    const other = await createTenant(master)
    expect((await other.api.get(`/agents/${agt}/kb/syncs/${s.sync_id}`)).status).toBe(404)
    expect((await other.api.get(`/agents/${agt}/kb/syncs`)).status).toBe(404)
    expect((await t.api.get(`/agents/${agt}/kb/syncs/sync_999999999`)).status).toBe(404)
  }, 90_000)

  it('only the navigation and footer changed: fetched in full, counted unchanged, nothing re-ingested', async () => {
    verifies('fresh.sync.boilerplate')
    const before = await pages(t.api, agt)
    const stale = (await summaryOf(t.api, agt)).stale
    pagesOf['/hours'] = page(
      'Hours',
      '<h1>Opening hours</h1><p>We open at 7 am and close at 6 pm from Monday to Saturday.</p>',
      `${NAV} <a href="/">Back to top</a>`,
      '© Example 2026 · Updated 27 November 2026 at 10:42',
    )
    const s = await sync(t.api, agt)
    expect(s).toMatchObject({ pages_checked: 3, not_modified: 2, unchanged: 1, changed: [], added: [], removed: [] })
    expect(await pages(t.api, agt)).toEqual(before)
    expect((await summaryOf(t.api, agt)).stale).toBe(stale)
  }, 90_000)

  it("one page's main text changed: exactly that page in changed and one re-ingest; the summary is rebuilt", async () => {
    verifies('fresh.sync.changed', 'fresh.sync.summary')
    const before = await pages(t.api, agt)
    const version = (await summaryOf(t.api, agt)).version
    pagesOf['/prices'] = page(
      'Prices',
      '<h1>Prices</h1><p>A sourdough loaf costs 6 pounds and a rye loaf 7 pounds.</p>',
      NAV,
    )
    const s = await sync(t.api, agt)
    expect(s).toMatchObject({
      pages_checked: 3,
      not_modified: 2,
      unchanged: 0,
      changed: [`${site.origin}/prices`],
      added: [],
      removed: [],
      summary_rebuild: true,
    })
    const after = await pages(t.api, agt)
    expect(after['/']).toEqual(before['/'])
    expect(after['/hours']).toEqual(before['/hours'])
    expect(after['/prices'].updated_at).not.toBe(before['/prices'].updated_at)
    const doc = await t.api.get(`/agents/${agt}/kb/documents/${after['/prices'].doc_id}`)
    expect(JSON.stringify(doc.body)).toContain('6 pounds')
    await until('summary rebuilt', async () => {
      const now = await summaryOf(t.api, agt)
      return now.version === version + 1 && !now.stale
    })
  }, 90_000)

  it('a new page linked from the navigation is added', async () => {
    verifies('fresh.sync.added')
    pagesOf['/contact'] = page(
      'Contact',
      '<h1>Contact</h1><p>Call Crumb Bakery on 0113 496 0000 to order a cake.</p>',
      NAV,
    )
    for (const p of ['/', '/hours', '/prices'])
      pagesOf[p] = { body: (pagesOf[p].body ?? '').replace(NAV, `${NAV} <a href="/contact">Contact</a>`) }
    const s = await sync(t.api, agt)
    expect(s).toMatchObject({ unchanged: 3, changed: [], removed: [], added: [`${site.origin}/contact`] })
    const docs = await pages(t.api, agt)
    expect(Object.keys(docs).sort()).toEqual(['/', '/contact', '/hours', '/prices'])
    expect(docs['/contact']).toMatchObject({ status: 'indexed', source: 'build' })
    // The addition rebuilt the summary (reindex on): let it finish before the next test reads the version.
    await until('summary rebuilt', async () => !(await summaryOf(t.api, agt)).stale)
  }, 90_000)

  it('a page gone (404): kept with deletion keep, deleted with remove', async () => {
    verifies('fresh.sync.removed')
    delete pagesOf['/hours']
    const docs = await pages(t.api, agt)
    const kept = await sync(t.api, agt)
    expect(kept).toMatchObject({ removed: [`${site.origin}/hours`], changed: [], added: [], summary_rebuild: false })
    expect((await t.api.get(`/agents/${agt}/kb/documents/${docs['/hours'].doc_id}`)).status).toBe(200)
    expect((await t.api.patch(`/agents/${agt}`, { kb_sync: { deletion: 'remove' } })).status).toBe(200)
    const version = (await summaryOf(t.api, agt)).version
    const removed = await sync(t.api, agt)
    expect(removed).toMatchObject({ removed: [`${site.origin}/hours`], changed: [], added: [], summary_rebuild: true })
    expect((await t.api.get(`/agents/${agt}/kb/documents/${docs['/hours'].doc_id}`)).status).toBe(404)
    expect(Object.keys(await pages(t.api, agt)).sort()).toEqual(['/', '/contact', '/prices'])
    await until('summary rebuilt', async () => (await summaryOf(t.api, agt)).version === version + 1)
  }, 90_000)

  it('with reindex off a change is re-ingested and the summary stays stale, not rebuilt', async () => {
    verifies('fresh.sync.summary')
    expect((await t.api.patch(`/agents/${agt}`, { kb_sync: { reindex: false } })).status).toBe(200)
    const version = (await summaryOf(t.api, agt)).version
    pagesOf['/prices'] = page(
      'Prices',
      '<h1>Prices</h1><p>A sourdough loaf costs 8 pounds and a rye loaf 9 pounds.</p>',
      NAV,
    )
    const s = await sync(t.api, agt)
    expect(s).toMatchObject({ changed: [`${site.origin}/prices`], summary_rebuild: false })
    await sleep(1500)
    const summary = await summaryOf(t.api, agt)
    expect(summary.version).toBe(version)
    expect(summary.stale).toBe(true)
  }, 90_000)

  it('a second sync while one runs is 409 sync_in_progress naming it', async () => {
    verifies('fresh.sync.in-progress')
    pagesOf['/'] = { ...pagesOf['/'], delayMs: 2500 }
    try {
      const first = await t.api.post(`/agents/${agt}/kb/sync`)
      expect(first.status).toBe(202)
      const second = await t.api.post(`/agents/${agt}/kb/sync`)
      expect(second.status, second.text).toBe(409)
      expect(second.body.error.code).toBe('sync_in_progress')
      expect(second.body.error.message).toContain(first.body.sync_id)
      const list = await t.api.get(`/agents/${agt}/kb/syncs?limit=100`)
      expect(list.body.data.filter((x: { status: string }) => x.status === 'running')).toHaveLength(1)
      await until('first sync done', async () => {
        const g = await t.api.get(`/agents/${agt}/kb/syncs/${first.body.sync_id}`)
        return g.body.status !== 'running'
      })
    } finally {
      delete pagesOf['/'].delayMs
    }
    // Once it has ended, a new sync is accepted.
    expect((await sync(t.api, agt)).status).toBe('succeeded')
  }, 90_000)

  it('kb.synced carries each finished sync as GET reads it', async () => {
    verifies('fresh.sync.event')
    const s = await sync(t.api, agt)
    const got = await until('kb.synced', async () =>
      rx.received.find((x) => x.json?.type === 'kb.synced' && x.json.data?.sync_id === s.sync_id),
    )
    expect(got.headers['x-svc-event']).toBe('kb.synced')
    expect(got.json.data).toEqual(s)
    expect(rx.received.filter((x) => x.json?.data?.sync_id === s.sync_id)).toHaveLength(1)
  }, 90_000)
})

describe('sitemap lastmod, site rule, robots and bounds', () => {
  it('pages whose sitemap lastmod is older than the last fetch are not requested at all', async () => {
    verifies('fresh.sync.unchanged')
    const old = '2020-01-01T00:00:00Z'
    const pagesOf: Record<string, Page> = bakery()
    const site = await serveSite(pagesOf) // no validators: only the sitemap can spare the requests
    const sitemap = (lastmods: Record<string, string>) =>
      `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${Object.entries(
        lastmods,
      )
        .map(([p, m]) => `<url><loc>${site.origin}${p}</loc><lastmod>${m}</lastmod></url>`)
        .join('')}</urlset>`
    pagesOf['/sitemap.xml'] = { body: sitemap({ '/': old, '/hours': old, '/prices': old }), type: 'application/xml' }
    try {
      const agt = await buildAgent(t.api, t.accountId, `${site.origin}/`)
      const mark = site.hits.length
      const s = await sync(t.api, agt)
      expect(s).toMatchObject({ pages_checked: 3, not_modified: 3, unchanged: 0, changed: [], added: [], removed: [] })
      expect(site.hits.slice(mark).filter((p) => !p.endsWith('.xml') && !p.endsWith('.txt'))).toEqual([])
      // A lastmod after the last fetch: that page alone is fetched, and found changed.
      pagesOf['/hours'] = page('Hours', '<h1>Opening hours</h1><p>We now open at 6 am from Monday to Sunday.</p>', NAV)
      pagesOf['/sitemap.xml'].body = sitemap({
        '/': old,
        '/hours': new Date(Date.now() + 60_000).toISOString(),
        '/prices': old,
      })
      const mark2 = site.hits.length
      const s2 = await sync(t.api, agt)
      expect(s2).toMatchObject({ not_modified: 2, changed: [`${site.origin}/hours`] })
      expect(site.hits.slice(mark2).filter((p) => !p.endsWith('.xml') && !p.endsWith('.txt'))).toEqual(['/hours'])
    } finally {
      await site.close()
    }
  }, 120_000)

  it("never requests another host's URL, honours robots.txt, and reads a 50,000-entry sitemap while /health answers", async () => {
    verifies('fresh.sync.bounds')
    const elsewhere = await serveSite({ '/x': page('Elsewhere', '<p>Another site entirely, never to be fetched.</p>') })
    const pagesOf: Record<string, Page> = bakery()
    const site = await serveSite(pagesOf, { validators: true })
    const trial = await createTenant(master, { plan: 'trial' })
    try {
      const agt = await buildAgent(trial.api, trial.accountId, `${site.origin}/`)
      pagesOf['/robots.txt'] = { body: 'User-agent: *\nDisallow: /private\n', type: 'text/plain' }
      pagesOf['/private'] = page('Private', '<p>Staff only: the alarm code is 1234.</p>')
      pagesOf['/'] = page(
        'Crumb Bakery',
        '<h1>Crumb Bakery</h1><p>Crumb Bakery bakes sourdough bread and rye loaves in Leeds every morning.</p>',
        `${NAV} <a href="/private">Staff</a> <a href="${elsewhere.origin}/x">Partner</a>`,
      )
      const entries = Array.from({ length: 50_000 }, (_, i) => `<url><loc>${site.origin}/none/${i}</loc></url>`)
      pagesOf['/sitemap.xml'] = {
        type: 'application/xml',
        body: `<urlset><url><loc>${elsewhere.origin}/x</loc></url>${entries.join('')}</urlset>`,
      }
      const post = await trial.api.post(`/agents/${agt}/kb/sync`)
      expect(post.status).toBe(202)
      // The health check answers within 1 s throughout the sync.
      let slowest = 0
      for (;;) {
        const t0 = Date.now()
        const h = await fetch(`${base}/health`)
        slowest = Math.max(slowest, Date.now() - t0)
        expect(h.status).toBe(200)
        const g = await trial.api.get(`/agents/${agt}/kb/syncs/${post.body.sync_id}`)
        if (g.body.status !== 'running') break
        await sleep(100)
      }
      expect(slowest).toBeLessThan(1000)
      expect(elsewhere.hits).toEqual([])
      expect(site.hits).not.toContain('/private')
      // The trial plan's 50-page cap bounds what the sitemap could add; none of its pages exists.
      const s = (await trial.api.get(`/agents/${agt}/kb/syncs/${post.body.sync_id}`)).body
      expect(s.status).toBe('succeeded')
      expect(s.added).toEqual([])
      expect(site.hits.filter((p) => p.startsWith('/none/')).length).toBeLessThanOrEqual(150)
    } finally {
      await site.close()
      await elsewhere.close()
    }
  }, 180_000)
})
