// CSRF protection of the authorize page's login form (POST /oauth/login). Without it a foreign site can
// post its own credentials and sign the victim's browser in as the attacker, whose consent screen the
// victim then approves (login CSRF). Double submit, stateless: a random nonce in a SameSite=Lax,
// HttpOnly cookie, and a hidden field that is an HMAC of that nonce and of the authorization request
// (the return_to URL) with an expiry. A cross-site POST carries no cookie; an attacker's own valid
// field is bound to the attacker's nonce, not the victim's.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { mintToken } from '~/lib/opaque-token'

export const LOGIN_COOKIE = 'svc_oauth_login'
export const LOGIN_FORM_TTL_MS = 30 * 60_000

const NONCE = /^[A-Za-z0-9_-]{43}$/

/** The cookie's nonce: the one the browser already holds (several tabs share it), else a fresh one. */
export const loginNonce = (current: string | undefined) => (current && NONCE.test(current) ? current : mintToken(''))

const formKey = (secret: string) =>
  createHash('sha256')
    .update('oauth-login-form\0' + secret)
    .digest()
const mac = (nonce: string, returnTo: string, exp: number, secret: string) =>
  createHmac('sha256', formKey(secret)).update(`${exp}\0${nonce}\0${returnTo}`).digest()

/** The hidden `csrf` field of the login form: `<expiry ms>.<HMAC(nonce, return_to, expiry)>`. */
export function signLoginForm(nonce: string, returnTo: string, secret: string, now = Date.now()): string {
  const exp = now + LOGIN_FORM_TTL_MS
  return `${exp}.${mac(nonce, returnTo, exp, secret).toString('base64url')}`
}

/** Constant-time check of the field against the cookie's nonce and the posted return_to. */
export function verifyLoginForm(
  field: string | null,
  nonce: string | undefined,
  returnTo: string,
  secret: string,
  now = Date.now(),
): boolean {
  if (!field || !nonce || field.length > 200 || !NONCE.test(nonce)) return false
  const m = /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(field)
  if (!m) return false
  const exp = Number(m[1])
  // Compared as text: decoding would accept the non-canonical spellings of the last character.
  const expected = Buffer.from(mac(nonce, returnTo, exp, secret).toString('base64url'))
  const given = Buffer.from(m[2])
  return given.length === expected.length && timingSafeEqual(given, expected) && exp > now
}
