import { getHeader } from 'h3'
import { defineOAuthRoute, readForm } from '~/http/define-oauth-route'
import { authenticateClient } from '~/domain/oauth/clients'
import { OAuthErrors } from '~/domain/oauth/errors'
import { checkOAuthRate } from '~/domain/oauth/limits'
import { RevokeForm } from '~/domain/oauth/schemas'
import { revokeToken } from '~/domain/oauth/tokens'

export default defineOAuthRoute({
  summary: 'Revoke an OAuth token (RFC 7009)',
  description:
    'Form-encoded `token` (and optional `token_type_hint`), with the same client authentication as the token endpoint. 200 with an empty body, also for unknown or expired tokens. Revoking a refresh token ends the whole connection (its tokens and its key); an access token only itself.',
  requestType: 'form',
  body: RevokeForm,
  errors: ['invalid_request', 'invalid_client', 'unauthorized_client', 'rate_limited'],
  async handler({ event, runtime }) {
    const form = await readForm(event)
    const client = await authenticateClient(runtime.database, getHeader(event, 'authorization'), form)
    await checkOAuthRate(runtime, 'revoke', client.id)
    if (!form.token) throw OAuthErrors.invalidRequest('token is required.')
    await revokeToken(runtime.database, client, form.token)
    return undefined
  },
})
