import * as v from 'valibot'
import { sendRedirect } from 'h3'
import { definePageRoute } from '~/http/define-oauth-route'
import { signIn } from '~/http/define-session-route'
import { ApiError } from '~/lib/errors'
import { loginFormValid, readPageForm, renderLogin, safeReturnPath, sendErrorPage } from '~/http/oauth-pages'
import { login } from '~/domain/sessions/sessions'

const Form = v.object({
  email: v.string(),
  password: v.string(),
  return_to: v.pipe(v.string(), v.description('The authorize URL (path and query) to continue with')),
  csrf: v.pipe(
    v.string(),
    v.description('The form token of the login page, bound to return_to and to the svc_oauth_login cookie'),
  ),
})

export default definePageRoute(
  {
    summary: 'Sign in from the authorization page',
    description:
      "The login form of `GET /oauth/authorize`: the same login as `POST /api/auth/login` (same per-IP failure limit), sets the `svc_session` cookie and answers 303 back to the authorize URL. The form's `csrf` token must match the `svc_oauth_login` cookie and `return_to`, else 403 and the form again (nobody is signed in).",
    body: Form,
  },
  async (event, runtime) => {
    const form = await readPageForm(event)
    const returnTo = safeReturnPath(form.get('return_to') ?? undefined)
    if (!returnTo)
      return sendErrorPage(event, 400, 'This sign-in form is not valid', 'Restart the connection from the application.')
    // Before the password is looked at: a cross-site post must not sign anyone in, nor count as a failure.
    if (!loginFormValid(event, runtime, form, returnTo)) {
      return renderLogin(event, runtime, returnTo, {
        status: 403,
        error: 'This sign-in form has expired or was not opened in this browser. Sign in again.',
      })
    }
    const email = (form.get('email') ?? '').slice(0, 254)
    const password = (form.get('password') ?? '').slice(0, 256)
    try {
      await signIn(event, runtime, () => login(runtime.database, email, password))
    } catch (e) {
      if (e instanceof ApiError && (e.status === 401 || e.status === 429)) {
        for (const [k, val] of Object.entries(e.headers)) event.node.res.setHeader(k, val)
        return renderLogin(event, runtime, returnTo, {
          status: e.status,
          error: e.status === 429 ? 'Too many attempts; wait a minute and try again.' : e.message,
        })
      }
      throw e
    }
    return sendRedirect(event, returnTo, 303)
  },
)
