import { recentErrors } from '~/domain/admin/system'
import { SystemErrors, SystemErrorsQuery } from '~/domain/admin/schemas'
import { defineAdminRoute } from '~/http/define-admin-route'

export default defineAdminRoute({
  summary: 'Recent errors',
  description:
    'Answers with status 500 or above (from the audit table: request id, method, path, status, error code, credential, accounts) and failed jobs (pg-boss: name, retries, the error message cut to 1,000 characters) of the last `hours` (1–168, default 24), newest first, at most `limit` (1–200, default 50) of each.',
  query: SystemErrorsQuery,
  response: SystemErrors,
  errors: ['invalid_limit', 'validation_error'],
  handler: ({ runtime, query }) => recentErrors(runtime, { hours: query.hours, limit: query.limit }),
})
