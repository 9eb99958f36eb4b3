import { protectedResourceMetadata } from '~/domain/oauth/metadata'
import { publicOrigin } from '~/http/public-origin'
import { defineApiRoute } from '~/http/define-api-route'

export default defineApiRoute({
  summary: 'Protected resource metadata of /v1/mcp (RFC 9728)',
  description: 'resource `<origin>/v1/mcp`, authorization server `<origin>`.',
  tags: ['OAuth'],
  auth: 'public',
  raw: true,
  handler: ({ event, runtime }) => protectedResourceMetadata(publicOrigin(event, runtime.config), '/v1/mcp'),
})
