import * as v from 'valibot'
import { definePageRoute } from '~/http/define-oauth-route'
import { optionalSession, readPageForm, redirectTo, renderConsent, sendErrorPage } from '~/http/oauth-pages'
import { approve, denyLocation, redirectUriMatches, verifyPending } from '~/domain/oauth/authorize'
import { clientLookup } from '~/domain/oauth/client-document'
import type { ClientRow } from '~/domain/oauth/clients'
import { OAuthError } from '~/domain/oauth/errors'
import { clientIpKey } from '~/http/client-ip'
import { publicOrigin } from '~/http/public-origin'

const Form = v.object({
  request_id: v.pipe(v.string(), v.description('The signed pending request from the consent form')),
  decision: v.picklist(['approve', 'deny']),
  scope: v.optional(v.pipe(v.array(v.string()), v.description('Repeated; the scopes the user kept checked'))),
})

export default definePageRoute(
  {
    summary: 'OAuth consent decision',
    description:
      "The consent form posts here with the dashboard session. Approve mints a personal key for the connection (the kept scopes, the user's home account) and redirects to `redirect_uri` with `code`, `state` and `iss`; deny redirects with `error=access_denied`.",
    body: Form,
  },
  async (event, runtime) => {
    const session = await optionalSession(event, runtime)
    if (!session)
      return sendErrorPage(
        event,
        401,
        'Your session has ended',
        'Sign in again by restarting the connection from the application.',
      )
    const form = await readPageForm(event)
    const request = verifyPending(
      form.get('request_id') ?? '',
      { userId: session.userId, sessionToken: session.token },
      runtime.config.secret,
    )
    if (!request)
      return sendErrorPage(
        event,
        400,
        'This consent form has expired',
        'The form is older than 10 minutes or was not shown in this session.',
      )
    // A URL client's document is read again (usually from the cache): it may have been withdrawn or
    // changed since the page was shown.
    let client: ClientRow | null
    try {
      client = await clientLookup(runtime, clientIpKey(event))(request.clientId)
    } catch (e) {
      if (!(e instanceof OAuthError)) throw e
      return sendErrorPage(event, e.status === 429 ? 429 : 400, 'The application cannot be used', e.message, e.error)
    }
    if (!client?.redirectUris.some((r) => redirectUriMatches(r, request.redirectUri)))
      return sendErrorPage(
        event,
        400,
        'The application is no longer registered',
        'Restart the connection from the application.',
      )
    const origin = publicOrigin(event, runtime.config)
    const decision = form.get('decision')
    if (decision === 'deny') return redirectTo(event, denyLocation(request, origin))
    if (decision !== 'approve') return sendErrorPage(event, 400, 'No decision', 'Choose Allow or Deny.')
    const kept = request.scopes.filter((s) => form.getAll('scope').includes(s))
    if (!kept.length)
      return renderConsent(event, runtime, session, client, request, {
        status: 400,
        error: 'Keep at least one permission checked, or choose Deny.',
      })
    return redirectTo(event, await approve(runtime.database, session, client, request, kept, origin))
  },
)
