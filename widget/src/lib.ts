// Pure helpers of the widget script (no DOM): unit-tested on Node (test/unit/widget-lib.test.ts).

export interface Appearance {
  theme: 'light' | 'dark' | 'auto'
  primary_color: string
  position: 'bottom-right' | 'bottom-left'
  title: string
  launcher_text: string
  avatar_url: string | null
  welcome_message: string | null
}

export interface Message {
  role: 'user' | 'agent' | 'error'
  text: string
}

/** What survives a page load (sessionStorage, one entry per widget token). */
export interface Stored {
  conversation_id: string
  visitor_token: string
  messages: Message[]
  appearance?: Partial<Record<keyof Appearance, unknown>>
}

export const DEFAULTS: Appearance = {
  theme: 'light',
  primary_color: '#2563eb',
  position: 'bottom-right',
  title: 'Chat with us',
  launcher_text: 'Chat',
  avatar_url: null,
  welcome_message: null,
}

/** At most this many messages are kept in sessionStorage (the oldest are dropped). */
export const MAX_STORED = 100

export const storageKey = (token: string) => `svc-widget:${token}`

/** The API origin is the origin of the script's own src (the snippet loads it from the service). */
export function apiOrigin(src: string, base: string): string {
  return new URL(src, base).origin
}

const str = (v: unknown, max: number) => (typeof v === 'string' && v.trim() ? v.trim().slice(0, max) : null)

/**
 * The appearance from, in order of precedence: the create-conversation response (when the API sends one),
 * the snippet's data-* attributes (data-primary-color, data-title, ...), then the defaults. Unknown or
 * malformed values fall back, so a page cannot inject CSS through a colour.
 */
export function resolveAppearance(...sources: (Partial<Record<string, unknown>> | null | undefined)[]): Appearance {
  const out: Appearance = { ...DEFAULTS }
  for (const s of [...sources].reverse()) {
    if (!s) continue
    const theme = s.theme
    if (theme === 'light' || theme === 'dark' || theme === 'auto') out.theme = theme
    if (typeof s.primary_color === 'string' && /^#[0-9a-fA-F]{6}$/.test(s.primary_color))
      out.primary_color = s.primary_color
    if (s.position === 'bottom-right' || s.position === 'bottom-left') out.position = s.position
    out.title = str(s.title, 100) ?? out.title
    out.launcher_text = str(s.launcher_text, 100) ?? out.launcher_text
    const avatar = str(s.avatar_url, 2000)
    if (avatar && /^https?:\/\//.test(avatar)) out.avatar_url = avatar
    out.welcome_message = str(s.welcome_message, 1000) ?? out.welcome_message
  }
  return out
}

/** data-primary-color="#123456" → { primary_color: '#123456' } (a DOMStringMap or a plain record). */
export function appearanceFromDataset(dataset: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(dataset)) {
    if (k === 'token' || v === undefined) continue
    out[k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase())] = v
  }
  return out
}

/** The greeting of a create-conversation answer: a string, or an object with text (a turn), or none. */
export function greetingText(g: unknown): string | null {
  if (typeof g === 'string') return g.trim() || null
  if (g && typeof g === 'object' && typeof (g as { text?: unknown }).text === 'string')
    return (g as { text: string }).text.trim() || null
  return null
}

/** The message of an API error envelope, or a short generic one. */
export function errorMessage(body: unknown, status: number): string {
  const m = (body as { error?: { message?: unknown } } | null)?.error?.message
  if (typeof m === 'string' && m) return m
  return status === 0
    ? 'The chat is unreachable. Check your connection and try again.'
    : `Something went wrong (${status}).`
}

export function parseStored(raw: string | null): Stored | null {
  if (!raw) return null
  try {
    const s = JSON.parse(raw) as Stored
    if (typeof s?.conversation_id !== 'string' || typeof s.visitor_token !== 'string' || !Array.isArray(s.messages))
      return null
    s.messages = s.messages.filter((m) => m && typeof m.text === 'string' && ['user', 'agent'].includes(m.role))
    return s
  } catch {
    return null
  }
}

export function serializeStored(s: Stored): string {
  return JSON.stringify({ ...s, messages: s.messages.filter((m) => m.role !== 'error').slice(-MAX_STORED) })
}

const UTM_KEYS = ['source', 'medium', 'campaign', 'term', 'content'] as const

/** The host page's utm_* parameters (each at most 200 characters, as the API takes them), or null when none. */
export function utmFromSearch(search: string): Record<string, string> | null {
  const params = new URLSearchParams(search)
  const out: Record<string, string> = {}
  for (const k of UTM_KEYS) {
    const v = params.get(`utm_${k}`)
    if (v) out[k] = v.slice(0, 200)
  }
  return Object.keys(out).length ? out : null
}

/** The browser's language when it is a tag the API takes (BCP-47), else null. */
export function browserLanguage(language: string | undefined): string | null {
  return language && /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/.test(language) && language.length <= 35 ? language : null
}
