import * as v from 'valibot'
import { definePageRoute } from '~/http/define-oauth-route'
import {
  authorizeReturnPath,
  optionalSession,
  redirectTo,
  renderConsent,
  renderLogin,
  sendErrorPage,
} from '~/http/oauth-pages'
import { validateAuthorizeRequest } from '~/domain/oauth/authorize'
import { clientLookup } from '~/domain/oauth/client-document'
import { clientIpKey } from '~/http/client-ip'
import { publicOrigin } from '~/http/public-origin'

const Query = v.object({
  response_type: v.literal('code'),
  client_id: v.pipe(
    v.string(),
    v.description(
      'A registered client id, or an https URL naming a Client ID Metadata Document (fetched, at most 5 KB within 5 s, cached by its Cache-Control up to 24 h)',
    ),
  ),
  redirect_uri: v.optional(v.string()),
  code_challenge: v.string(),
  code_challenge_method: v.literal('S256'),
  state: v.optional(v.string()),
  scope: v.optional(
    v.pipe(
      v.string(),
      v.description(
        'Space-separated scope names; unknown ones are ignored; none of ours means the read-only default (agents:read kb:read conversations:read summaries:read metrics:read); credentials:manage and partners:manage are never granted (dropped, or invalid_scope when nothing else was asked)',
      ),
    ),
  ),
  resource: v.optional(v.pipe(v.string(), v.description('RFC 8707; <origin>/mcp by default'))),
})

export default definePageRoute(
  {
    summary: 'OAuth authorization endpoint',
    description:
      "A browser page. An unknown `client_id` or unregistered `redirect_uri` is a 400 page and never redirects; so is a Client ID Metadata Document that cannot be fetched, whose `client_id` is not the URL or whose `redirect_uris` lack the request's (`invalid_client`, 429 when the per-IP fetch limit is spent). Without a dashboard session it shows a login form; with one, the consent form (the user may narrow the scopes). Other request errors redirect with `error`, `state` and `iss`.",
    query: Query,
  },
  async (event, runtime) => {
    const url = new URL(authorizeReturnPath(event), 'http://x')
    const origin = publicOrigin(event, runtime.config)
    const lookup = clientLookup(runtime, clientIpKey(event))
    const outcome = await validateAuthorizeRequest(lookup, url.searchParams, origin)
    if (outcome.kind === 'page')
      return sendErrorPage(event, outcome.status, outcome.title, outcome.message, outcome.error)
    if (outcome.kind === 'redirect') return redirectTo(event, outcome.location)
    const session = await optionalSession(event, runtime)
    if (!session) return renderLogin(event, runtime, authorizeReturnPath(event))
    return renderConsent(event, runtime, session, outcome.client, outcome.request)
  },
)
