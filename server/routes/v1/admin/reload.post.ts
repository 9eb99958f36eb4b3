import { reloadConfig } from '~/domain/admin/config'
import { PlatformConfig } from '~/domain/admin/schemas'
import { defineAdminRoute } from '~/http/define-admin-route'

export default defineAdminRoute({
  summary: 'Apply the stored defaults now',
  description:
    'Re-reads the stored platform defaults (GET /admin/config) and applies them on the instance that answers at once, without waiting for its poll (every instance also polls within 10 s). Answers the configuration now applied. Recorded in the action log as config.reload.',
  response: PlatformConfig,
  action: 'config.reload',
  handler: ({ runtime }) => reloadConfig(runtime),
})
