import { systemStatus } from '~/domain/admin/system'
import { SystemStatus } from '~/domain/admin/schemas'
import { defineAdminRoute } from '~/http/define-admin-route'

export default defineAdminRoute({
  summary: 'System status',
  description:
    'The health components (a database probe at most 1 s old), the database kind and probe time, the job queue (depth = created + retry jobs; active; failed in 24 h), the instances that beat in the last day (live = seen within 60 s; current = the one answering), the version, start time and uptime of this instance, and its chat and telephony providers.',
  response: SystemStatus,
  handler: ({ runtime }) => systemStatus(runtime),
})
