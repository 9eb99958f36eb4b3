import { protectedResourceMetadata } from '~/domain/oauth/metadata'
import { publicOrigin } from '~/http/public-origin'
import { defineApiRoute } from '~/http/define-api-route'

export default defineApiRoute({
  summary: 'Protected resource metadata, root form (RFC 9728)',
  description:
    'The fallback clients read when the path-inserted document is missing: the same document as `/.well-known/oauth-protected-resource/mcp` (resource `<origin>/mcp`).',
  tags: ['OAuth'],
  auth: 'public',
  raw: true,
  handler: ({ event, runtime }) => protectedResourceMetadata(publicOrigin(event, runtime.config), '/mcp'),
})
