import { getHeader } from 'h3'
import { defineOAuthRoute, readForm } from '~/http/define-oauth-route'
import { authenticateClient } from '~/domain/oauth/clients'
import { OAuthErrors } from '~/domain/oauth/errors'
import { checkOAuthRate } from '~/domain/oauth/limits'
import { publicOrigin } from '~/http/public-origin'
import { TokenAnswer, TokenForm } from '~/domain/oauth/schemas'
import { exchangeCode, lifetimesOf, refreshTokens } from '~/domain/oauth/tokens'

export default defineOAuthRoute({
  summary: 'OAuth token endpoint',
  description:
    'Form-encoded. `authorization_code` (PKCE S256 `code_verifier` and the exact `redirect_uri` required; a replayed code revokes what it issued) and `refresh_token` (rotated on every use; a rotated token presented again within 30 s mints another pair, later it revokes the grant). Any other grant type, `client_credentials` included, is `unsupported_grant_type`. `resource` (RFC 8707) must be this server. Limited per client and grant type.',
  requestType: 'form',
  body: TokenForm,
  response: TokenAnswer,
  errors: [
    'invalid_request',
    'invalid_client',
    'invalid_grant',
    'unsupported_grant_type',
    'invalid_scope',
    'invalid_target',
    'unauthorized_client',
    'rate_limited',
  ],
  async handler({ event, runtime }) {
    const form = await readForm(event)
    const client = await authenticateClient(runtime.database, getHeader(event, 'authorization'), form)
    const grantType = form.grant_type
    if (!grantType) throw OAuthErrors.invalidRequest('grant_type is required.')
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token')
      throw OAuthErrors.unsupportedGrantType('Only authorization_code and refresh_token are supported.')
    await checkOAuthRate(runtime, 'token', `${client.id}:${grantType}`)
    const origin = publicOrigin(event, runtime.config)
    const life = lifetimesOf(runtime.config)
    return grantType === 'authorization_code'
      ? exchangeCode(runtime.database, client, form, origin, life)
      : refreshTokens(runtime.database, client, form, origin, life)
  },
})
