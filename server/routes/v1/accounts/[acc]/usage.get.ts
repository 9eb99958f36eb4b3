import { defineApiRoute } from '~/http/define-api-route'
import { single } from '~/http/envelope'
import { AccountParams, UsageQuery, UsageReport } from '~/domain/accounts/schemas'
import { accountUsage } from '~/domain/accounts/accounts'

export default defineApiRoute({
  summary: 'Billed usage report',
  description:
    'Required from and to (range [from, to)); group_by is one to three of agent, agent_type, channel, date (UTC day), month (UTC YYYY-MM), default agent. conversations counts billed sessions; cost_usd is after session multipliers.',
  tags: ['Accounts'],
  scope: 'usage:read',
  params: AccountParams,
  query: UsageQuery,
  repeatable: ['account_id'],
  response: UsageReport,
  errors: ['invalid_id', 'not_found', 'missing_param', 'invalid_date', 'invalid_date_range'],
  raw: true,
  async handler({ event, runtime, principal, params, query }) {
    const { report, meta } = await accountUsage(runtime.database, principal, params.acc, query)
    return single(event, report, meta)
  },
})
