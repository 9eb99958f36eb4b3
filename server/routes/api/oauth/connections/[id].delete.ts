import { defineSessionRoute } from '~/http/define-session-route'
import { disconnect } from '~/domain/oauth/connections'
import { ConnectionParams } from '~/domain/oauth/schemas'

export default defineSessionRoute({
  summary: 'Disconnect an OAuth connection',
  description:
    "Revokes the connection, every access and refresh token of it and the personal key minted for it, at once. Disconnecting twice is harmless; another user's connection is 404.",
  tags: ['Dashboard'],
  params: ConnectionParams,
  status: 204,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, session, params }) => disconnect(runtime.database, session.userId, params.id),
})
