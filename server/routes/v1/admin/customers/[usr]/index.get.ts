import { customerOverview } from '~/domain/admin/customers'
import { CustomerOverview, CustomerParams } from '~/domain/admin/schemas'
import { defineAdminRoute } from '~/http/define-admin-route'

export default defineAdminRoute({
  summary: 'One customer at a glance',
  description:
    "The user, its account (plan, limit, status), its agents, the last 30 days of usage by channel, the wallet (usage above the plan limit settled into the ledger first; the newest 5 entries) and the account's requests answered 4xx or 5xx in the last 7 days (newest 20).",
  params: CustomerParams,
  response: CustomerOverview,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, params }) => customerOverview(runtime.database, params.usr),
})
