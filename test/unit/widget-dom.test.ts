// The built widget script run in a server-side DOM (linkedom) with a fake fetch and sessionStorage: not a
// browser (no layout, no real focus), but it proves the script's wiring: shadow root, ARIA, greeting,
// a message round trip, the API headers, events, the sessionStorage restore and Escape.
import { parseHTML } from 'linkedom'
import { beforeAll, describe, expect, it } from 'vitest'
import { buildWidget } from '../../scripts/build-widget.mjs'

let code: string
beforeAll(async () => {
  code = (await buildWidget({ log: false })).code
})

type Call = { url: string; body: any; headers: Record<string, string> }

function page(store: Map<string, string>, calls: Call[]) {
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
    fetch: async (url: string, init: any) => {
      calls.push({ url, body: JSON.parse(init.body), headers: init.headers })
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
  const root = (document.querySelector('[data-svc-widget]') as any).shadowRoot
  return { window, document, root }
}
const tick = () => new Promise((r) => setTimeout(r, 10))

describe('widget script in a DOM', () => {
  it('mounts a launcher and an accessible dialog in a shadow root, and chats', async () => {
    const store = new Map<string, string>()
    const calls: Call[] = []
    const { window, document, root } = page(store, calls)
    expect(document.body.lastElementChild!.hasAttribute('data-svc-widget')).toBe(true)
    const launcher = root.querySelector('.launcher')
    expect(launcher.getAttribute('aria-expanded')).toBe('false')
    expect(launcher.getAttribute('aria-label')).toBe('Open chat: Help desk')
    const panel = root.querySelector('[role=dialog]')
    expect(panel.getAttribute('aria-modal')).toBe('true')
    expect(root.querySelector('#' + panel.getAttribute('aria-labelledby')).textContent).toBe('Help desk')
    expect(root.querySelector('[role=log]').getAttribute('aria-live')).toBe('polite')
    expect(root.querySelector('style').textContent).toContain('#112233')
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
      '/v1/widget/events',
      '/v1/widget/events',
      '/v1/widget/conversations',
      '/v1/widget/events',
      '/v1/widget/conversations/conv_p1/messages',
      '/v1/widget/events',
    ])
    expect(calls.map((c) => c.body.type).filter(Boolean)).toEqual([
      'widget.loaded',
      'widget.opened',
      'message.shown',
      'message.shown',
    ])
    expect(calls.every((c) => c.headers['x-svc-widget-token'] === 'wpk_abc')).toBe(true)
    expect(calls[4]).toMatchObject({ body: { text: 'hello' }, headers: { 'x-svc-visitor-token': 'vt_1' } })

    const esc = Object.assign(new window.Event('keydown'), { key: 'Escape' })
    panel.dispatchEvent(esc)
    expect(panel.hidden).toBe(true)
    expect(launcher.getAttribute('aria-expanded')).toBe('false')
    await tick()
    expect(calls.at(-1)!.body).toMatchObject({ type: 'widget.closed', conversation_id: 'conv_p1' })
  })

  it('restores the transcript and the conversation after a page load', async () => {
    const store = new Map<string, string>()
    const first: Call[] = []
    const a = page(store, first)
    a.root.querySelector('.launcher').dispatchEvent(new a.window.Event('click'))
    await tick()
    expect(store.get('svc-widget:wpk_abc')).toContain('conv_p1')

    const calls: Call[] = []
    const b = page(store, calls)
    expect([...b.root.querySelectorAll('.msg')].map((m: any) => m.textContent)).toEqual(['Hi! See https://x.test/a.'])
    b.root.querySelector('.launcher').dispatchEvent(new b.window.Event('click'))
    b.root.querySelector('textarea').value = 'again'
    b.root.querySelector('form').dispatchEvent(new b.window.Event('submit'))
    await tick()
    expect(calls.some((c) => c.url.endsWith('/v1/widget/conversations'))).toBe(false)
    expect(calls.find((c) => c.url.endsWith('/messages'))!.url).toContain('/conversations/conv_p1/messages')
  })
})
