// The built widget script run in a server-side DOM (linkedom) with a fake fetch and sessionStorage: not a
// browser (no layout, no real focus), but it proves the script's wiring: shadow root, ARIA, greeting,
// a message round trip, the API headers, events, the sessionStorage restore and Escape, and that it
// mounts only after GET /v1/widget/config answered (nothing, and one console warning, when it fails).
import { parseHTML } from 'linkedom'
import { beforeAll, describe, expect, it } from 'vitest'
import { buildWidget } from '../../scripts/build-widget.mjs'

let code: string
beforeAll(async () => {
  code = (await buildWidget({ log: false })).code
})

type Call = { url: string; body: any; headers: Record<string, string> }

const APPEARANCE = {
  theme: null,
  primary_color: null,
  position: null,
  title: null,
  launcher_text: 'Ask us',
  avatar_url: null,
  welcome_message: null,
}
type Config = { fail?: 'network' | 403; createDelayMs?: number }
const tick = () => new Promise((r) => setTimeout(r, 10))

async function page(store: Map<string, string>, calls: Call[], config: Config = {}) {
  const warnings: string[] = []
  const { window, document } = parseHTML(
    '<html><body><p>page</p><script src="https://svc.test/widget.js" data-token="wpk_abc" data-title="Help desk" data-primary-color="#112233"></script></body></html>',
  )
  const globals = {
    // A page of its own (linkedom's windows share state): the script keeps its one-per-token mark here.
    window: {},
    document,
    location: { href: 'https://shop.test/' },
    sessionStorage: {
      getItem: (k: string) => store.get(k) ?? null,
      setItem: (k: string, v: string) => store.set(k, v),
      removeItem: (k: string) => store.delete(k),
    },
    console: { warn: (...args: unknown[]) => warnings.push(args.join(' ')) },
    fetch: async (url: string, init: any) => {
      calls.push({ url, body: init.body === undefined ? undefined : JSON.parse(init.body), headers: init.headers })
      if (url.endsWith('/config')) {
        if (config.fail === 'network') throw new TypeError('Failed to fetch')
        if (config.fail)
          return {
            ok: false,
            status: config.fail,
            json: async () => ({ error: { code: 'origin_not_allowed', message: 'Not allowed.' } }),
          }
        return { ok: true, status: 200, json: async () => ({ appearance: APPEARANCE, greeting: 'Hi!' }) }
      }
      if (url.endsWith('/conversations') && config.createDelayMs)
        await new Promise((r) => setTimeout(r, config.createDelayMs))
      const json = url.endsWith('/conversations')
        ? { conversation_id: 'conv_p1', visitor_token: 'vt_1', greeting: 'Hi! See https://x.test/a.' }
        : url.endsWith('/messages')
          ? { turn: { text: 'The answer.' } }
          : {}
      return { ok: true, status: url.endsWith('/conversations') ? 201 : 200, json: async () => json }
    },
  }
  Object.defineProperty(document, 'currentScript', { value: document.querySelector('script') })
  new Function(...Object.keys(globals), code)(...Object.values(globals))
  // Nothing is mounted before the settings have answered.
  expect(document.querySelector('[data-svc-widget]')).toBeNull()
  await tick()
  const root = (document.querySelector('[data-svc-widget]') as any)?.shadowRoot
  return { window, document, root, warnings }
}

describe('widget script in a DOM', () => {
  it('mounts a launcher and an accessible dialog in a shadow root, and chats', async () => {
    const store = new Map<string, string>()
    const calls: Call[] = []
    const { window, document, root } = await page(store, calls)
    expect(document.body.lastElementChild!.hasAttribute('data-svc-widget')).toBe(true)
    const launcher = root.querySelector('.launcher')
    expect(launcher.getAttribute('aria-expanded')).toBe('false')
    expect(launcher.getAttribute('aria-label')).toBe('Open chat: Help desk')
    const panel = root.querySelector('[role=dialog]')
    expect(panel.getAttribute('aria-modal')).toBe('true')
    expect(root.querySelector('#' + panel.getAttribute('aria-labelledby')).textContent).toBe('Help desk')
    expect(root.querySelector('[role=log]').getAttribute('aria-live')).toBe('polite')
    expect(root.querySelector('style').textContent).toContain('#112233')
    // The settings' appearance paints over the snippet's data-* attributes where it has a value.
    expect(launcher.textContent).toBe('Ask us')
    expect(panel.hidden).toBe(true)

    launcher.dispatchEvent(new window.Event('click'))
    await tick()
    expect(panel.hidden).toBe(false)
    expect(launcher.getAttribute('aria-expanded')).toBe('true')
    root.querySelector('textarea').value = 'hello'
    root.querySelector('form').dispatchEvent(new window.Event('submit'))
    await tick()
    const msgs = [...root.querySelectorAll('.msg')].map((m: any) => `${m.className}: ${m.textContent}`)
    expect(msgs).toEqual(['msg agent: Hi! See https://x.test/a.', 'msg user: hello', 'msg agent: The answer.'])
    expect(root.querySelector('.msg a').getAttribute('href')).toBe('https://x.test/a')
    expect(calls.map((c) => c.url.replace('https://svc.test', ''))).toEqual([
      '/v1/widget/config',
      '/v1/widget/events',
      '/v1/widget/events',
      '/v1/widget/conversations',
      '/v1/widget/events',
      '/v1/widget/conversations/conv_p1/messages',
      '/v1/widget/events',
    ])
    expect(calls.map((c) => c.body?.type).filter(Boolean)).toEqual([
      'widget.loaded',
      'widget.opened',
      'message.shown',
      'message.shown',
    ])
    expect(calls.every((c) => c.headers['x-svc-widget-token'] === 'wpk_abc')).toBe(true)
    expect(calls[0]).toMatchObject({ body: undefined, headers: { 'x-svc-widget-token': 'wpk_abc' } })
    expect(calls[5]).toMatchObject({ body: { text: 'hello' }, headers: { 'x-svc-visitor-token': 'vt_1' } })

    const esc = Object.assign(new window.Event('keydown'), { key: 'Escape' })
    panel.dispatchEvent(esc)
    expect(panel.hidden).toBe(true)
    expect(launcher.getAttribute('aria-expanded')).toBe('false')
    await tick()
    expect(calls.at(-1)!.body).toMatchObject({ type: 'widget.closed', conversation_id: 'conv_p1' })
  })

  it('sends a message typed while the conversation is still being created (it waits for it)', async () => {
    const calls: Call[] = []
    const { window, root } = await page(new Map(), calls, { createDelayMs: 40 })
    root.querySelector('.launcher').dispatchEvent(new window.Event('click'))
    // At once, before the create has answered.
    root.querySelector('textarea').value = 'quick question'
    root.querySelector('form').dispatchEvent(new window.Event('submit'))
    await new Promise((r) => setTimeout(r, 80))
    const msgs = [...root.querySelectorAll('.msg')].map((m: any) => `${m.className}: ${m.textContent}`)
    expect(msgs).toEqual(['msg agent: Hi! See https://x.test/a.', 'msg user: quick question', 'msg agent: The answer.'])
    expect(calls.filter((c) => c.url.endsWith('/conversations'))).toHaveLength(1)
    expect(root.querySelector('.send').disabled).toBe(false)
  })

  it('restores the transcript and the conversation after a page load', async () => {
    const store = new Map<string, string>()
    const first: Call[] = []
    const a = await page(store, first)
    a.root.querySelector('.launcher').dispatchEvent(new a.window.Event('click'))
    await tick()
    expect(store.get('svc-widget:wpk_abc')).toContain('conv_p1')

    const calls: Call[] = []
    const b = await page(store, calls)
    expect([...b.root.querySelectorAll('.msg')].map((m: any) => m.textContent)).toEqual(['Hi! See https://x.test/a.'])
    b.root.querySelector('.launcher').dispatchEvent(new b.window.Event('click'))
    b.root.querySelector('textarea').value = 'again'
    b.root.querySelector('form').dispatchEvent(new b.window.Event('submit'))
    await tick()
    expect(calls.some((c) => c.url.endsWith('/v1/widget/conversations'))).toBe(false)
    expect(calls.find((c) => c.url.endsWith('/messages'))!.url).toContain('/conversations/conv_p1/messages')
  })

  it('mounts nothing when the settings cannot be read, and says why in one console line', async () => {
    for (const fail of ['network', 403] as const) {
      const calls: Call[] = []
      const p = await page(new Map(), calls, { fail })
      expect(p.document.querySelector('[data-svc-widget]'), String(fail)).toBeNull()
      expect(calls.map((c) => c.url)).toEqual(['https://svc.test/v1/widget/config'])
      expect(p.warnings).toHaveLength(1)
      expect(p.warnings[0]).toMatch(/^\[svc widget\] not shown: https:\/\/svc\.test\/v1\/widget\/config /)
      expect(p.warnings[0]).toContain(fail === 403 ? 'answered 403: Not allowed.' : 'allowed_domains')
    }
  })
})
