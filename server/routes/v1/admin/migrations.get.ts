import { appliedMigrations } from '~/domain/admin/system'
import { wholePage } from '~/domain/catalogue/page'
import { asList } from '~/http/define-api-route'
import { Migrations } from '~/domain/admin/schemas'
import { defineAdminRoute } from '~/http/define-admin-route'

export default defineAdminRoute({
  summary: 'Applied migrations',
  description:
    'The ledger server/db/migrate.ts writes (schema_migrations): every applied migration file by name, with the SHA-256 of its SQL and when it was applied, in application order.',
  response: Migrations,
  // The whole ledger in one page, in the list envelope like every list (has_more false).
  handler: async ({ runtime }) => asList(wholePage(await appliedMigrations(runtime))),
})
