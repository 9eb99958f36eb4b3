// The page a password-reset link opens, and the page its form answers. Opening the link spends nothing
// (mail scanners and prefetchers follow every URL in a message): the form POSTs the token with the new
// password to POST /api/auth/password-reset/confirm. Served with CONFIRM_PAGE_HEADERS (no-store, no
// Referer, never framed, no script), as the login-link page.
import { escapeHtml as esc } from '~/lib/html'
import { layout } from './oauth'

export const RESET_FORM_ACTION = '/api/auth/password-reset/confirm'

export function resetPage(token: string): string {
  return layout(
    'Choose a new password',
    `<h1>Choose a new dashboard password</h1>
<p>At least 12 characters. Saving it signs you out everywhere; then sign in with the new password.</p>
<form method="post" action="${RESET_FORM_ACTION}" enctype="multipart/form-data" class="box">
<input type="hidden" name="token" value="${esc(token)}">
<label>New password <input type="password" name="password" autocomplete="new-password" minlength="12" maxlength="256" required></label>
<p><button type="submit">Save the password</button></p>
</form>`,
  )
}

export function resetDonePage(): string {
  return layout(
    'Password changed',
    '<h1>Your password is changed</h1><p>Every dashboard session was signed out. Sign in with the new password.</p>',
  )
}
