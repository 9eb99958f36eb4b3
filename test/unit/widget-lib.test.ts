// Pure helpers of the widget script (widget/src/lib.ts) and of the demo page.
import { describe, expect, it } from 'vitest'
import {
  DEFAULTS,
  MAX_STORED,
  apiOrigin,
  appearanceFromDataset,
  errorMessage,
  greetingText,
  parseStored,
  resolveAppearance,
  serializeStored,
  storageKey,
  browserLanguage,
  utmFromSearch,
} from '../../widget/src/lib'
import { demoSnippet, hostAllowed } from '~/site/widget-demo-page'

describe('widget helpers', () => {
  it('derives the API origin from the script src', () => {
    expect(apiOrigin('https://svc.example.com/widget.js?v=abc', 'https://shop.example.org/p')).toBe(
      'https://svc.example.com',
    )
    expect(apiOrigin('/widget.js', 'http://localhost:3000/widget-demo')).toBe('http://localhost:3000')
    expect(storageKey('wpk_x')).toBe('svc-widget:wpk_x')
  })

  it('resolves appearance: API first, then data-* attributes, then defaults; rejects malformed values', () => {
    expect(resolveAppearance()).toEqual(DEFAULTS)
    const data = appearanceFromDataset({
      token: 'wpk_x',
      primaryColor: '#aabbcc',
      title: 'Help',
      position: 'bottom-left',
    })
    expect(data).toEqual({ primary_color: '#aabbcc', title: 'Help', position: 'bottom-left' })
    const a = resolveAppearance({ title: 'From API', primary_color: 'red;}*{x', theme: 'dark' }, data)
    expect(a).toMatchObject({ title: 'From API', primary_color: '#aabbcc', position: 'bottom-left', theme: 'dark' })
    expect(resolveAppearance({ avatar_url: 'javascript:alert(1)', position: 'top' }).avatar_url).toBeNull()
    expect(resolveAppearance({ position: 'top', title: '   ' })).toMatchObject({
      position: 'bottom-right',
      title: DEFAULTS.title,
    })
  })

  it('reads greetings, API errors and the stored conversation defensively', () => {
    expect(greetingText('Hi!')).toBe('Hi!')
    expect(greetingText({ text: 'Hello' })).toBe('Hello')
    expect(greetingText(null)).toBeNull()
    expect(errorMessage({ error: { code: 'x', message: 'Origin not allowed.' } }, 403)).toBe('Origin not allowed.')
    expect(errorMessage(null, 500)).toBe('Something went wrong (500).')
    expect(errorMessage(null, 0)).toContain('unreachable')
    expect(parseStored('not json')).toBeNull()
    expect(parseStored('{"conversation_id":1}')).toBeNull()
    const messages = Array.from({ length: MAX_STORED + 5 }, (_, i) => ({ role: 'user' as const, text: `m${i}` }))
    const s = parseStored(
      serializeStored({
        conversation_id: 'conv_p1',
        visitor_token: 'v',
        messages: [...messages, { role: 'error', text: 'oops' }],
      }),
    )!
    expect(s.messages).toHaveLength(MAX_STORED)
    expect(s.messages.at(-1)).toEqual({ role: 'user', text: `m${MAX_STORED + 4}` })
  })
})

describe('widget demo page helpers', () => {
  it('matches hosts against allowed domains, wildcards included', () => {
    expect(hostAllowed('localhost', ['localhost'])).toBe(true)
    expect(hostAllowed('shop.example.com', ['*.example.com'])).toBe(true)
    expect(hostAllowed('example.com', ['*.example.com'])).toBe(false)
    expect(hostAllowed('evilexample.com', ['*.example.com'])).toBe(false)
    expect(hostAllowed('127.0.0.1', ['localhost'])).toBe(false)
  })

  it('adds the appearance to the snippet as escaped data-* attributes', () => {
    const snippet = '<script src="http://x/widget.js" data-token="wpk_1" async></script>'
    expect(demoSnippet(snippet, { primary_color: '#112233', title: '"><b>', position: null })).toBe(
      '<script src="http://x/widget.js" data-token="wpk_1" data-primary-color="#112233" data-title="&quot;&gt;&lt;b&gt;" async></script>',
    )
  })
})

describe('utmFromSearch and browserLanguage', () => {
  it("reads the host page's utm_* parameters (each cut to 200 characters) and a BCP-47 browser language", () => {
    expect(utmFromSearch('?utm_source=news&utm_medium=email&x=1')).toEqual({ source: 'news', medium: 'email' })
    expect(utmFromSearch(`?utm_campaign=${'c'.repeat(300)}`)?.campaign).toHaveLength(200)
    expect(utmFromSearch('?q=1')).toBeNull()
    expect(browserLanguage('fr-CA')).toBe('fr-CA')
    expect(browserLanguage('not a tag')).toBeNull()
    expect(browserLanguage(undefined)).toBeNull()
  })
})
