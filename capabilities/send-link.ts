// Shares a page of the business's own site. Links elsewhere are refused so a visitor cannot make the agent
// vouch for an arbitrary URL. Not offered on outbound calls: a voice call has no way to deliver a link.
import * as v from 'valibot'
import { defineCapability } from '~/kit/capability'

const NAME = 'send_link'

export default defineCapability({
  name: NAME,
  description: 'Share a link to a page of the business website (defaults to the home page).',
  parameters: v.strictObject({
    topic: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
    url: v.optional(v.pipe(v.string(), v.url())),
  }),
  needs: ['website_url'],
  apiChat: true,
  outbound: false,
  example: {
    args: { topic: 'opening hours', url: 'https://example.com/hours' },
    settings: { website_url: 'https://example.com' },
  },
  // Offline: "send me a link to your menu"; the topic is the words after it (the home page is shared).
  intents: [
    {
      pattern: String.raw`\b(?:send|give|share|text|e-?mail)\s+(?:me\s+|us\s+)?(?:a\s+|the\s+)?link\s+(?:to|for|about|on)\s+(?:the\s+|your\s+|a\s+)?(?P<topic>[\pL\pN][\pL\pN '-]{0,80})`,
    },
  ],
  async run(ctx, args) {
    const site = typeof ctx.settings.website_url === 'string' ? safeUrl(ctx.settings.website_url) : null
    if (!site) return { ok: false, message: 'No website is configured for this agent.' }
    const target = args.url ? safeUrl(args.url) : site
    if (!target || target.hostname.replace(/^www\./, '') !== site.hostname.replace(/^www\./, '')) {
      return { ok: false, message: `I can only share pages of ${site.hostname}.` }
    }
    return {
      ok: true,
      message: `Here is the link about ${args.topic}: ${target.href}`,
      record: { type: 'link', topic: args.topic, url: target.href },
      outcome: 'resolved',
    }
  },
})

function safeUrl(s: string): URL | null {
  try {
    const u = new URL(s)
    return u.protocol === 'https:' || u.protocol === 'http:' ? u : null
  } catch {
    return null
  }
}
