// Pure helpers of the widget demo page (unit-tested).
import { APPEARANCE_KEYS } from '~/domain/agents/schemas'
import { escapeHtml as esc } from '~/lib/html'

/** Whether a page host is covered by allowed_domains entries (example.com, *.example.com, localhost). */
export function hostAllowed(host: string, allowed: string[]): boolean {
  const h = host.toLowerCase()
  return allowed.some((d) => {
    const e = d.toLowerCase()
    return e.startsWith('*.') ? h.endsWith(e.slice(1)) && h.length > e.length - 1 : h === e
  })
}

/**
 * The snippet with the agent's appearance as data-* attributes (data-primary-color, data-title, …), which
 * the script reads until the API answers with an appearance of its own. Values are HTML-escaped.
 */
export function demoSnippet(snippet: string, appearance: Record<string, unknown>): string {
  const attrs = APPEARANCE_KEYS.filter((k) => typeof appearance[k] === 'string')
    .map((k) => ` data-${k.replace(/_/g, '-')}="${esc(appearance[k] as string)}"`)
    .join('')
  return snippet.replace(' async></script>', `${attrs} async></script>`)
}
