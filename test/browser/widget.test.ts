// The embeddable widget in headless Chromium (test/helpers/browser.ts), against the shared server. The test
// serves a shop page on 127.0.0.1 that Chromium reaches as http://shop.example.com:<port>/ (in the agent's
// allowed_domains) or http://evil.example.net:<port>/ (not), with the agent's embed_snippet pasted as an
// integrator would. The agent is built from a small bakery site, so answers quote its knowledge.
// No request interception (page.route): with it, Playwright answers CORS preflights itself and would hide
// what the server answers.
// All of this file's widget requests come from 127.0.0.1 and share one per-IP budget (60 a minute): about
// 35 of them, so keep new checks frugal or give them their own page loads sparingly.
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi } from '../helpers/api'
import { launchBrowser, screenshot, skipBrowserTests } from '../helpers/browser'
import { buildAgent } from '../helpers/build'
import { serveBakery, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const QUESTION = 'How much does a sourdough loaf cost?'
const FOLLOW_UP = 'How much do a dozen croissants cost?'

/**
 * The shop page: visible content in the flow, a layout-shift observer registered before the snippet loads
 * (Lighthouse's CLS is the sum of these entries), the main content's boxes measured just before it, then
 * the snippet exactly as GET /agents/{agt}/widget gives it.
 */
const shopPage = (snippet: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Wombat Bakery shop</title>
<style>
  body { margin: 0; font: 18px/1.5 system-ui, sans-serif; color: #222; }
  header { background: #f3e9dc; padding: 16px 24px; }
  main { max-width: 760px; margin: 0 auto; padding: 8px 24px; }
  .card { border: 1px solid #d9c6ad; border-radius: 8px; padding: 12px 16px; margin: 12px 0; }
  footer { padding: 16px 24px; color: #666; }
</style>
<script>
  window.__shifts = []
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__shifts.push({ value: e.value, hadRecentInput: e.hadRecentInput })
  }).observe({ type: 'layout-shift', buffered: true })
  window.__boxes = () =>
    [...document.querySelectorAll('header, main, main > *, footer')].map((e) => {
      const r = e.getBoundingClientRect()
      return [e.tagName + (e.id ? '#' + e.id : ''), r.x, r.y, r.width, r.height]
    })
</script>
</head><body>
<header><h1>Wombat Bakery</h1></header>
<main id="content">
  <p>Sourdough, croissants and pies, baked every morning in Ballarat.</p>
  ${['Sourdough loaf', 'Croissants', 'Pies', 'Rye bread', 'Scones']
    .map(
      (n) =>
        `<section class="card"><h2>${n}</h2><p>Fresh from the oven. Ask us about ${n.toLowerCase()}.</p></section>`,
    )
    .join('\n  ')}
</main>
<footer>Wombat Bakery, 1 Main Street, Ballarat</footer>
<script>window.__before = window.__boxes()</script>
${snippet}
</body></html>`

describe.skipIf(skipBrowserTests('test/browser/widget.test.ts'))('the widget in a real browser', () => {
  const base = inject('base')
  const master = createApi(base, inject('masterKey'))
  let t: Tenant
  let site: TestSite
  let shop: TestSite
  let browser: Browser
  let token: string
  let port: string
  const contexts: BrowserContext[] = []

  beforeAll(async () => {
    // Chromium starts while the agent builds (a launch failure is thrown below, not left unhandled).
    const launching = launchBrowser()
    launching.catch(() => {})
    site = await serveBakery('Wombat Bakery', 'Ballarat')
    t = await createTenant(master)
    const agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
    const w = await t.api.patch(`/agents/${agentId}/widget`, {
      allowed_domains: ['shop.example.com'],
      appearance: { title: 'Wombat help', primary_color: '#8a3b12', launcher_text: 'Ask Wombat' },
    })
    expect(w.status).toBe(200)
    const read = await t.api.get(`/agents/${agentId}/widget`)
    token = read.body.public_token
    const snippet: string = read.body.embed_snippet
    expect(snippet).toBe(`<script src="${inject('origin')}/widget.js" data-token="${token}" async></script>`)
    shop = await serveSite({ '/': { body: shopPage(snippet) } })
    port = new URL(shop.origin).port
    browser = await launching
  }, 120_000)

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {})
    await browser?.close()
    await shop?.close()
    await site?.close()
  })

  /** A fresh browser profile (cookies, sessionStorage) with one page, its console warnings collected. */
  async function newPage() {
    const context = await browser.newContext({ viewport: { width: 1024, height: 768 } })
    contexts.push(context)
    const page = await context.newPage()
    const warnings: string[] = []
    page.on('console', (m) => {
      if (m.type() === 'warning') warnings.push(m.text())
    })
    return { context, page, warnings }
  }

  const inWidget = (page: Page, css: string) => page.locator(`[data-svc-widget] ${css}`)
  const messages = (page: Page) => inWidget(page, '.msg').allTextContents()

  /** Types a question into the open dialog and waits for the agent's answer to it; answers its text. */
  async function ask(page: Page, question: string): Promise<string> {
    const agentMsgs = inWidget(page, '.msg.agent')
    const before = await agentMsgs.count()
    await inWidget(page, 'textarea').fill(question)
    await inWidget(page, 'textarea').press('Enter')
    await agentMsgs.nth(before).waitFor({ timeout: 30_000 })
    return (await agentMsgs.nth(before).textContent()) ?? ''
  }

  async function openWidget(page: Page) {
    const launcher = inWidget(page, 'button.launcher')
    await launcher.click()
    await inWidget(page, '[role=dialog]').waitFor({ state: 'visible' })
    expect(await launcher.getAttribute('aria-expanded')).toBe('true')
    // The greeting of a new conversation (or the restored transcript) is shown before any question.
    await inWidget(page, '.msg.agent').first().waitFor()
  }

  const stored = async (page: Page) =>
    JSON.parse((await page.evaluate((k) => sessionStorage.getItem(k), `svc-widget:${token}`)) ?? 'null')

  it("mounts on an allowed host, opens, and answers from the site's knowledge", async () => {
    verifies('widget.browser.allowed')
    const { page, warnings } = await newPage()
    await page.goto(`http://shop.example.com:${port}/`)
    const launcher = inWidget(page, 'button.launcher')
    await launcher.waitFor({ state: 'visible' })
    // Painted with the settings from GET /v1/widget/config.
    expect(await launcher.textContent()).toBe('Ask Wombat')
    expect(await launcher.getAttribute('aria-label')).toBe('Open chat: Wombat help')
    await openWidget(page)
    expect(await inWidget(page, '#svcw-title').textContent()).toBe('Wombat help')
    const answer = await ask(page, QUESTION)
    expect(answer).toContain('$9')
    expect(await messages(page)).toEqual([expect.any(String), QUESTION, answer])
    expect(warnings).toEqual([])
    await screenshot(page, 'widget-allowed')
  })

  it('mounts nothing on a host that is not allowed: the browser refuses the settings', async () => {
    verifies('widget.browser.disallowed')
    const { context, page, warnings } = await newPage()
    // The preflight is not a Playwright response event; the DevTools protocol reports it and the refusal.
    const cdp = await context.newCDPSession(page)
    await cdp.send('Network.enable')
    const preflights: { status: number; headers: Record<string, string> }[] = []
    const corsErrors: string[] = []
    cdp.on('Network.responseReceived', (e) => {
      if (e.type === 'Preflight' && e.response.url.endsWith('/v1/widget/config'))
        preflights.push({ status: e.response.status, headers: e.response.headers })
    })
    cdp.on('Network.loadingFailed', (e) => {
      if (e.corsErrorStatus) corsErrors.push(e.corsErrorStatus.corsError)
    })
    const script = page.waitForResponse((r) => r.url().endsWith('/widget.js'))
    await page.goto(`http://evil.example.net:${port}/`)
    expect((await script).status()).toBe(200)
    await expect.poll(() => warnings.length, { timeout: 10_000 }).toBe(1)
    expect(warnings[0]).toMatch(/^\[svc widget\] not shown: .*\/v1\/widget\/config could not be read/)
    expect(await page.locator('[data-svc-widget]').count()).toBe(0)
    expect(preflights).toHaveLength(1)
    expect(preflights[0].status).toBe(403)
    expect(Object.keys(preflights[0].headers).map((h) => h.toLowerCase())).not.toContain('access-control-allow-origin')
    expect(corsErrors).toEqual(['PreflightMissingAllowOriginHeader'])
    // The page itself is untouched.
    expect(await page.locator('main h2').count()).toBe(5)
    await screenshot(page, 'widget-disallowed')
  })

  it('keeps the conversation across a reload and continues it', async () => {
    verifies('widget.browser.reload')
    const { page } = await newPage()
    await page.goto(`http://shop.example.com:${port}/`)
    await openWidget(page)
    const first = await ask(page, QUESTION)
    expect(first).toContain('$9')
    const shown = await messages(page)
    const conv = (await stored(page)).conversation_id
    expect(conv).toMatch(/^conv_p\d+$/)

    await page.reload()
    await inWidget(page, 'button.launcher').waitFor({ state: 'visible' })
    expect((await stored(page)).conversation_id).toBe(conv)
    // The transcript is restored before the dialog is opened, and opening starts no new conversation.
    expect(await messages(page)).toEqual(shown)
    await openWidget(page)
    const second = await ask(page, FOLLOW_UP)
    expect(second).toContain('$30')
    expect((await stored(page)).conversation_id).toBe(conv)
    expect(await messages(page)).toEqual([...shown, FOLLOW_UP, second])

    const read = await t.api.get(`/conversations/${conv}?include=transcript`)
    expect(read.status).toBe(200)
    const turns = read.body.transcript.map((x: { speaker: string; text: string }) => [x.speaker, x.text])
    expect(turns.filter(([s]: string[]) => s !== 'agent').map(([, text]: string[]) => text)).toEqual([
      QUESTION,
      FOLLOW_UP,
    ])
    expect(turns.at(-1)).toEqual(['agent', second])
    await screenshot(page, 'widget-reload')
  })

  it("shifts nothing on the host page: CLS 0 and the page's boxes unchanged", async () => {
    verifies('widget.browser.layout-shift')
    const { page } = await newPage()
    expect(await page.evaluate(() => PerformanceObserver.supportedEntryTypes)).toContain('layout-shift')
    await page.goto(`http://shop.example.com:${port}/`)
    await expect(page.locator('main h2').first().isVisible()).resolves.toBe(true)
    await inWidget(page, 'button.launcher').waitFor({ state: 'visible' })
    await openWidget(page)
    // Two frames, so any shift of the last change is reported.
    const frames = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))))
    await frames()
    const shifts = () => page.evaluate(() => (window as any).__shifts as { value: number; hadRecentInput: boolean }[])
    expect(await shifts()).toEqual([])
    const cls = (await shifts()).reduce((sum, e) => sum + e.value, 0)
    expect(cls).toBe(0)
    const before = await page.evaluate(() => (window as any).__before)
    expect(before.length).toBe(9) // header, main, its paragraph and five cards, footer
    expect(await page.evaluate(() => (window as any).__boxes())).toEqual(before)
    await screenshot(page, 'widget-layout-shift')

    // The observer does see a shift when there is one (the 0 above is not for want of observing).
    await page.evaluate(() =>
      document
        .querySelector('main')!
        .prepend(Object.assign(document.createElement('p'), { textContent: 'A late banner.' })),
    )
    await frames()
    await expect.poll(async () => (await shifts()).length).toBeGreaterThan(0)
  })
})
