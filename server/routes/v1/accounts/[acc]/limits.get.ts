import { defineApiRoute } from '~/http/define-api-route'
import { AccountLimits, AccountParams } from '~/domain/accounts/schemas'
import { accountLimits } from '~/domain/accounts/accounts'

export default defineApiRoute({
  summary: 'Account limits, quotas and rate limits',
  description:
    'Daily quotas reset at 00:00 UTC; per-user overrides come from PATCH /users/{usr} limits. Call counters derive from outbound usage records.',
  tags: ['Accounts'],
  scope: 'accounts:read',
  params: AccountParams,
  response: AccountLimits,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, principal, params }) =>
    accountLimits(runtime.database, principal, params.acc, runtime.config.rateLimits),
})
