import { authorizationServerMetadata } from '~/domain/oauth/metadata'
import { publicOrigin } from '~/http/public-origin'
import { defineApiRoute } from '~/http/define-api-route'

export default defineApiRoute({
  summary: 'OAuth authorization server metadata (RFC 8414)',
  description:
    'The issuer is exactly the public origin (no trailing slash), identical to `authorization_servers[0]` of the protected-resource metadata. Not wrapped in the envelope.',
  tags: ['OAuth'],
  auth: 'public',
  raw: true,
  handler: ({ event, runtime }) => authorizationServerMetadata(publicOrigin(event, runtime.config)),
})
