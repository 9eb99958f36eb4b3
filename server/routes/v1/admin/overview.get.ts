import { platformOverview } from '~/domain/admin/customers'
import { Overview } from '~/domain/admin/schemas'
import { defineAdminRoute } from '~/http/define-admin-route'

export default defineAdminRoute({
  summary: 'Platform overview',
  description:
    'Counts of users, accounts by plan and status, agents, conversations and phone calls started today (UTC) and in the last 7 days, the sum of all wallets, responses with status 5xx in the last 24 hours, and the job queue depth.',
  response: Overview,
  handler: ({ runtime }) => platformOverview(runtime),
})
