import { getHeader, readRawBody } from 'h3'
import * as v from 'valibot'
import { defineOAuthRoute } from '~/http/define-oauth-route'
import { clientIpKey } from '~/http/client-ip'
import { registerClient } from '~/domain/oauth/clients'
import { OAuthErrors } from '~/domain/oauth/errors'
import { RegisterBody, RegisteredClient } from '~/domain/oauth/schemas'
import { checkOAuthRate } from '~/domain/oauth/limits'

export default defineOAuthRoute({
  summary: 'Register an OAuth client (RFC 7591)',
  description:
    'Open dynamic client registration for the assistant connector. Answers 201 with `client_id` and the registered metadata; unknown fields are ignored. `token_endpoint_auth_method` `none`, `client_secret_post` or `client_secret_basic` (the RFC default); the latter two get a `client_secret` (shown once, `client_secret_expires_at` 0). Limited per client IP.',
  requestType: 'json',
  body: RegisterBody,
  response: RegisteredClient,
  status: 201,
  errors: ['invalid_redirect_uri', 'invalid_client_metadata', 'rate_limited'],
  async handler({ event, runtime }) {
    await checkOAuthRate(runtime, 'register', `ip:${clientIpKey(event)}`)
    const type = (getHeader(event, 'content-type') ?? '').split(';')[0].trim().toLowerCase()
    if (type !== 'application/json')
      throw OAuthErrors.invalidClientMetadata('Send the client metadata as application/json.')
    // Read outside the JSON try: a body over the limit is a 413 from the reader, not bad metadata.
    const raw = (await readRawBody(event, 'utf8')) ?? ''
    let json: unknown
    try {
      json = JSON.parse(raw)
    } catch {
      throw OAuthErrors.invalidClientMetadata('The body is not valid JSON.')
    }
    const parsed = v.safeParse(RegisterBody, json)
    if (!parsed.success) {
      const issue = parsed.issues[0]
      const path = v.getDotPath(issue) ?? ''
      if (path.startsWith('redirect_uris') || (issue.received === 'undefined' && !path))
        throw OAuthErrors.invalidRedirectUri('redirect_uris must be an array of URI strings.')
      throw OAuthErrors.invalidClientMetadata(`${path || 'body'}: ${issue.message}`)
    }
    return registerClient(runtime.database, parsed.output)
  },
})
