// The page a login link's url opens. Mail scanners and link prefetchers follow every URL in a message,
// so opening the link must not spend it: the page only asks the person to confirm, and its form POSTs
// the token to POST /api/auth/login-link, which redeems it. No script; never framed (a framed confirm
// button could be clicked for someone); no Referer, so the token in the URL reaches no other site.
import { escapeHtml as esc } from '~/lib/html'

export const CONFIRM_PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
}

export function confirmPage(token: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex">
<title>Sign in to the dashboard</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}
h1{font-size:1.4rem}button{padding:.55rem 1.2rem;font-size:1rem}</style>
</head><body>
<h1>Sign in to the dashboard</h1>
<p>This one-time link signs you in. It works once and for 15 minutes from when it was issued.</p>
<form method="post" action="/api/auth/login-link" enctype="multipart/form-data">
<input type="hidden" name="token" value="${esc(token)}">
<p><button type="submit">Sign in</button></p>
</form>
</body></html>`
}
