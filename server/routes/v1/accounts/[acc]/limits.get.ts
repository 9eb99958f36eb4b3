import { defineApiRoute } from '~/http/define-api-route'
import { AccountLimits, AccountParams } from '~/domain/accounts/schemas'
import { accountLimits } from '~/domain/accounts/accounts'

export default defineApiRoute({
  summary: 'Account limits, quotas and rate limits',
  description:
    'Daily quotas reset at 00:00 UTC; per-user overrides come from PATCH /users/{usr} limits. Call counters derive from outbound usage records. Inbound calls have their own daily quota (inbound_calls_per_day, default 500; inbound_calls_today) and one caller number opens at most inbound_calls_per_caller_per_hour of them.',
  tags: ['Accounts'],
  scope: 'accounts:read',
  params: AccountParams,
  response: AccountLimits,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, principal, params }) =>
    accountLimits(runtime.database, principal, params.acc, runtime.config.rateLimits),
})
