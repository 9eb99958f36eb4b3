// Server-rendered pages of the authorization endpoint: login, consent and errors. No script; every
// interpolated value is escaped. They are never framed (clickjacking on the approve button).
import type { Scope } from '~/domain/credentials/scopes'
import { escapeHtml as esc } from '~/lib/html'

export const PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'Referrer-Policy': 'no-referrer',
}

/** The pages' one layout (also the password-reset page): escaped title, inline style, no script. */
export function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}
h1{font-size:1.4rem}.box{border:1px solid #ddd;border-radius:8px;padding:1rem 1.25rem;margin:1rem 0}
label{display:block;margin:.35rem 0}input[type=email],input[type=password]{width:100%;padding:.5rem;box-sizing:border-box}
button{padding:.55rem 1.2rem;margin-right:.5rem;font-size:1rem}.warn{color:#8a4b00}.err{color:#b00020}code{font-size:.9em}</style>
</head><body>${body}</body></html>`
}

export function errorPage(title: string, message: string, code?: string): string {
  return layout(
    title,
    `<h1>${esc(title)}</h1><p>${esc(message)}</p>${code ? `<p>Error: <code>${esc(code)}</code></p>` : ''}<p>Close this window and try connecting again from the application.</p>`,
  )
}

/** `csrf`: the form token of login-csrf.ts, bound to this return_to and the browser's cookie. */
export function loginPage(returnTo: string, csrf: string, error?: string): string {
  return layout(
    'Sign in',
    `<h1>Sign in to continue</h1>
<p>An application asks to connect to your account. Sign in first; you will then choose what it may do.</p>
${error ? `<p class="err">${esc(error)}</p>` : ''}
<form method="post" action="/oauth/login" class="box">
<input type="hidden" name="return_to" value="${esc(returnTo)}">
<input type="hidden" name="csrf" value="${esc(csrf)}">
<label>E-mail <input type="email" name="email" autocomplete="username" required></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<p><button type="submit">Sign in</button></p>
</form>`,
  )
}

export interface ConsentView {
  clientName: string | null
  clientId: string
  /** A URL client (Client ID Metadata Document): the host that publishes its description. */
  clientHost: string | null
  redirectHost: string
  email: string
  accountId: string
  scopes: Scope[]
  requestId: string
  error?: string
}

export function consentPage(v: ConsentView): string {
  const name = v.clientName ? esc(v.clientName) : `<code>${esc(v.clientId)}</code>`
  const boxes = v.scopes
    .map((s) => `<label><input type="checkbox" name="scope" value="${esc(s)}" checked> <code>${esc(s)}</code></label>`)
    .join('\n')
  return layout(
    'Connect an application',
    `<h1>Allow ${name} to access your account?</h1>
${v.clientHost ? `<p>The application describes itself at <strong>${esc(v.clientHost)}</strong>.</p>\n` : ''}<p class="warn">The name is chosen by the application itself and is not verified. After you decide you are sent to
<strong>${esc(v.redirectHost)}</strong>; continue only if you expect that.</p>
${v.error ? `<p class="err">${esc(v.error)}</p>` : ''}
<form method="post" action="/oauth/authorize" class="box">
<input type="hidden" name="request_id" value="${esc(v.requestId)}">
<p>Signed in as <strong>${esc(v.email)}</strong>, account <code>${esc(v.accountId)}</code>. The application gets its own API key
with the permissions you keep checked (uncheck any you do not want to grant):</p>
${boxes}
<p><button type="submit" name="decision" value="approve">Allow</button><button type="submit" name="decision" value="deny">Deny</button></p>
</form>
<p>You can disconnect it at any time in the dashboard; that stops every token it holds at once.</p>`,
  )
}
