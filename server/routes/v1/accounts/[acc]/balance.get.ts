import { defineApiRoute } from '~/http/define-api-route'
import { AccountParams, Balance } from '~/domain/accounts/schemas'
import { accountBalance } from '~/domain/accounts/accounts'

export default defineApiRoute({
  summary: 'Account balance',
  description:
    'status is the subscription status; when it is not active, billable actions answer 402 payment_required.',
  tags: ['Accounts'],
  scope: 'usage:read',
  params: AccountParams,
  response: Balance,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, principal, params }) => accountBalance(runtime.database, principal, params.acc),
})
