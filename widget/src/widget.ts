// The embeddable website widget (GET /widget.js): no framework, one IIFE built by esbuild
// (scripts/build-widget.mjs). The snippet `<script src=".../widget.js" data-token="wpk_…" async>` loads it;
// it attaches an open shadow root to a host element appended to <body> (style isolation), shows a fixed
// launcher and a chat dialog, and talks to the public widget API (/v1/widget/*) on the script's origin.
// Nothing is in the page flow (position: fixed), so the host page has no layout shift. It mounts only
// once GET /v1/widget/config has answered for this token and page Origin: elsewhere it shows nothing.
import {
  apiOrigin,
  appearanceFromDataset,
  browserLanguage,
  errorMessage,
  greetingText,
  parseStored,
  resolveAppearance,
  serializeStored,
  storageKey,
  type Message,
  type Stored,
  utmFromSearch,
} from './lib'
import { css } from './style'
import { startVoice, voiceSupported, type VoiceCall } from './voice'

type EventType = 'widget.loaded' | 'widget.opened' | 'widget.closed' | 'message.shown' | 'link.clicked'

;(() => {
  const script =
    (document.currentScript as HTMLScriptElement | null) ??
    document.querySelector<HTMLScriptElement>('script[data-token][src*="widget.js"]')
  const token = script?.dataset.token
  const w = window as unknown as { __svcWidgets?: Record<string, true> }
  if (!script || !token || w.__svcWidgets?.[token]) return
  w.__svcWidgets = { ...w.__svcWidgets, [token]: true }

  const origin = apiOrigin(script.src, location.href)
  const key = storageKey(token)
  const dataAppearance = appearanceFromDataset({ ...script.dataset })

  const load = (): Stored | null => {
    try {
      return parseStored(sessionStorage.getItem(key))
    } catch {
      return null
    }
  }
  let state = load()
  const save = () => {
    try {
      if (state) sessionStorage.setItem(key, serializeStored(state))
    } catch {
      /* storage full or blocked: the conversation lasts for this page only */
    }
  }

  /** A POST with a JSON body, or a GET without `body`. */
  async function post(path: string, body?: unknown): Promise<any> {
    let r: Response
    try {
      r = await fetch(
        origin + path,
        body === undefined
          ? { headers: { 'x-svc-widget-token': token! } }
          : {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                'x-svc-widget-token': token!,
                ...(state ? { 'x-svc-visitor-token': state.visitor_token } : {}),
              },
              body: JSON.stringify(body),
            },
      )
    } catch {
      throw new Error(errorMessage(null, 0))
    }
    const json = await r.json().catch(() => null)
    if (!r.ok) throw Object.assign(new Error(errorMessage(json, r.status)), { status: r.status })
    return json
  }

  /** Fire-and-forget analytics: never throws, never blocks the UI. */
  const track = (type: EventType, data?: Record<string, unknown>) => {
    post('/v1/widget/events', {
      type,
      ...(state ? { conversation_id: state.conversation_id } : {}),
      ...(data ? { data } : {}),
    }).catch(() => {})
  }

  // --- DOM -----------------------------------------------------------------------------------------
  const host = document.createElement('div')
  host.setAttribute('data-svc-widget', '')
  // Out of the page flow whatever the page's CSS says about divs: zero size, fixed, no layout shift.
  host.setAttribute('style', 'all:initial;position:fixed;width:0;height:0;z-index:2147483000')
  const root = host.attachShadow({ mode: 'open' })
  const h = <K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string) => {
    const el = document.createElement(tag)
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v)
    if (text !== undefined) el.textContent = text
    return el
  }

  const style = h('style')
  const launcher = h('button', {
    type: 'button',
    class: 'launcher',
    'aria-haspopup': 'dialog',
    'aria-expanded': 'false',
  })
  const panel = h('div', { class: 'panel', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'svcw-title' })
  panel.hidden = true
  const header = h('div', { class: 'header' })
  const avatar = h('img', { class: 'avatar', alt: '' })
  const title = h('h2', { id: 'svcw-title' })
  const close = h('button', { type: 'button', class: 'close', 'aria-label': 'Close chat' }, '×')
  const log = h('div', { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-relevant': 'additions' })
  const status = h('div', { class: 'status', role: 'status' })
  const form = h('form', { class: 'composer' })
  const input = h('textarea', {
    rows: '1',
    'aria-label': 'Your message',
    placeholder: 'Type a message…',
    maxlength: '4000',
  })
  const send = h('button', { type: 'submit', class: 'send' }, 'Send')
  const mic = h('button', { type: 'button', class: 'mic', 'aria-label': 'Start voice chat', 'aria-pressed': 'false' })
  // An inline icon: an emoji would depend on the visitor's fonts.
  const SVG = 'http://www.w3.org/2000/svg'
  const icon = document.createElementNS(SVG, 'svg')
  icon.setAttribute('viewBox', '0 0 24 24')
  icon.setAttribute('aria-hidden', 'true')
  const glyph = document.createElementNS(SVG, 'path')
  glyph.setAttribute(
    'd',
    'M12 14a3 3 0 0 0 3-3V5a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3zm5-3a5 5 0 0 1-10 0H5a7 7 0 0 0 6 6.92V21h2v-3.08A7 7 0 0 0 19 11z',
  )
  glyph.setAttribute('fill', 'currentColor')
  icon.append(glyph)
  mic.append(icon)
  header.append(avatar, title, close)
  form.append(input, ...(voiceSupported() ? [mic] : []), send)
  panel.append(header, log, status, form)
  root.append(style, launcher, panel)

  let appearance = resolveAppearance(state?.appearance, dataAppearance)
  const paint = () => {
    style.textContent = css(appearance)
    launcher.textContent = appearance.launcher_text
    launcher.setAttribute('aria-label', `Open chat: ${appearance.title}`)
    title.textContent = appearance.title
    avatar.hidden = !appearance.avatar_url
    if (appearance.avatar_url) avatar.src = appearance.avatar_url
    host.className = `${appearance.position} theme-${appearance.theme}`
  }
  paint()

  const render = (m: Message, announce: boolean) => {
    const el = h('p', { class: `msg ${m.role}` })
    // Answers are text; links become anchors (http/https only), nothing else is interpreted as HTML.
    const parts = m.text.split(/(https?:\/\/[^\s<>"']+[^\s<>"'.,;:!?)])/g)
    parts.forEach((part, i) => {
      if (i % 2) {
        const a = h('a', { href: part, target: '_blank', rel: 'noopener noreferrer' }, part)
        el.append(a)
      } else if (part) el.append(part)
    })
    log.append(el)
    log.scrollTop = log.scrollHeight
    if (announce && m.role === 'agent') track('message.shown')
  }
  log.addEventListener('click', (e) => {
    const a = (e.target as HTMLElement).closest?.('a')
    if (a) track('link.clicked', { url: a.href })
  })
  const add = (m: Message) => {
    if (state && m.role !== 'error') {
      state.messages.push(m)
      save()
    }
    render(m, true)
  }
  for (const m of state?.messages ?? []) render(m, false)

  // --- conversation ---------------------------------------------------------------------------------
  let starting: Promise<void> | null = null
  const start = (): Promise<void> => {
    if (starting) return starting
    starting = (async () => {
      // The visitor's language picks a greeting; the host page's utm_* parameters tell where they came from.
      const utm = utmFromSearch(globalThis.location?.search ?? '')
      const language = browserLanguage(globalThis.navigator?.language)
      const r = await post('/v1/widget/conversations', { ...(language ? { language } : {}), ...(utm ? { utm } : {}) })
      state = { conversation_id: r.conversation_id, visitor_token: r.visitor_token, messages: [] }
      if (r.appearance && typeof r.appearance === 'object') {
        state.appearance = r.appearance
        appearance = resolveAppearance(r.appearance, dataAppearance)
        paint()
      }
      save()
      const greeting = greetingText(r.greeting) ?? appearance.welcome_message
      if (greeting) add({ role: 'agent', text: greeting })
    })().finally(() => {
      starting = null
    })
    return starting
  }

  let busy = false
  const setBusy = (b: boolean, text = '') => {
    busy = b
    send.disabled = b
    panel.setAttribute('aria-busy', String(b))
    status.textContent = text
  }

  let sending = false
  async function submit() {
    const text = input.value.trim()
    if (!text || sending) return
    sending = true
    setBusy(true, 'Sending…')
    try {
      // A message typed while the conversation is still being created (just after opening) waits for it.
      if (starting) await starting.catch(() => {})
      if (!state) await start()
      input.value = ''
      add({ role: 'user', text })
      const r = await post(`/v1/widget/conversations/${encodeURIComponent(state!.conversation_id)}/messages`, { text })
      const answer = r?.turn?.text
      if (typeof answer === 'string' && answer) add({ role: 'agent', text: answer })
    } catch (e) {
      // A conversation the API no longer knows (expired, token regenerated): start afresh next time.
      const st = (e as { status?: number }).status
      if (st === 401 || st === 403 || st === 404) {
        state = null
        try {
          sessionStorage.removeItem(key)
        } catch {}
      }
      render({ role: 'error', text: (e as Error).message }, false)
    } finally {
      sending = false
      setBusy(false)
      input.focus()
    }
  }

  // --- voice chat ---------------------------------------------------------------------------------
  // A separate conversation (channel voice_chat) on its own socket; its captions show in the log but are
  // not kept across page loads (the text conversation is).
  let call: VoiceCall | null = null
  let calling = false
  const note = (text: string) => {
    log.append(h('p', { class: 'note' }, text))
    log.scrollTop = log.scrollHeight
  }
  const voiceOff = () => {
    call = null
    calling = false
    mic.setAttribute('aria-pressed', 'false')
    mic.setAttribute('aria-label', 'Start voice chat')
  }
  mic.addEventListener('click', async () => {
    if (call) return call.stop()
    if (calling) return
    calling = true
    status.textContent = 'Starting voice chat…'
    try {
      call = await startVoice(origin, token!, {
        live: () => {
          note('Voice chat started')
          mic.setAttribute('aria-pressed', 'true')
          mic.setAttribute('aria-label', 'End voice chat')
          status.textContent = 'Voice chat is on: speak now.'
        },
        caption: (role, text) => render({ role: role === 'visitor' ? 'user' : 'agent', text }, role === 'agent'),
        ended: () => {
          // A socket refused or lost before the conversation opened never went live.
          if (mic.getAttribute('aria-pressed') === 'true') note('Voice chat ended')
          else
            render(
              { role: 'error', text: 'Voice chat is not available right now. You can type your message instead.' },
              false,
            )
          voiceOff()
          status.textContent = ''
        },
      })
    } catch {
      voiceOff()
      status.textContent = ''
      render({ role: 'error', text: 'Voice chat needs your microphone. You can type your message instead.' }, false)
      input.focus()
    }
  })

  // --- open, close, keyboard ------------------------------------------------------------------------
  const isOpen = () => !panel.hidden
  function open() {
    if (isOpen()) return
    panel.hidden = false
    launcher.setAttribute('aria-expanded', 'true')
    input.focus()
    track('widget.opened')
    if (!state && !busy) {
      setBusy(true, 'Connecting…')
      start()
        .catch((e: Error) => render({ role: 'error', text: e.message }, false))
        .finally(() => {
          if (!sending) setBusy(false)
        })
    }
  }
  function shut() {
    if (!isOpen()) return
    panel.hidden = true
    launcher.setAttribute('aria-expanded', 'false')
    launcher.focus()
    track('widget.closed')
  }

  launcher.addEventListener('click', () => (isOpen() ? shut() : open()))
  close.addEventListener('click', shut)
  form.addEventListener('submit', (e) => {
    e.preventDefault()
    void submit()
  })
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault()
      void submit()
    }
  })
  panel.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      e.preventDefault()
      shut()
    } else if (e.key === 'Tab') {
      // Focus trap: Tab and Shift+Tab cycle through the dialog's controls.
      const items = [...panel.querySelectorAll<HTMLElement>('button, textarea, a[href]')].filter(
        (el) => !(el as HTMLButtonElement).disabled,
      )
      const first = items[0]
      const last = items[items.length - 1]
      const active = root.activeElement
      if (e.shiftKey && (active === first || !panel.contains(active))) {
        e.preventDefault()
        last?.focus()
      } else if (!e.shiftKey && (active === last || !panel.contains(active))) {
        e.preventDefault()
        first?.focus()
      }
    }
  })

  const mount = () => {
    document.body.appendChild(host)
    track('widget.loaded')
  }
  // The settings first: a page whose Origin is not allowed (the browser refuses the answer), a replaced
  // token or any other failure mounts nothing, with one line in the console for the site's developer.
  post('/v1/widget/config').then(
    (r) => {
      appearance = resolveAppearance(r?.appearance, state?.appearance, dataAppearance)
      paint()
      if (document.body) mount()
      else document.addEventListener('DOMContentLoaded', mount)
    },
    (e: Error & { status?: number }) =>
      console.warn(
        `[svc widget] not shown: ${origin}/v1/widget/config ${
          e.status
            ? `answered ${e.status}: ${e.message}`
            : "could not be read (a wrong data-token, this page's host not in the agent's allowed_domains, or the network)"
        }`,
      ),
  )
})()
