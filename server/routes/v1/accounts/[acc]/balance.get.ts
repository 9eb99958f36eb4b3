import { defineApiRoute } from '~/http/define-api-route'
import { AccountParams, Balance } from '~/domain/accounts/schemas'
import { accountBalance, canSee } from '~/domain/accounts/accounts'
import { settleWallet } from '~/domain/admin/wallet'

export default defineApiRoute({
  summary: 'Account balance',
  description:
    "status is the subscription status; when it is not active, billable actions answer 402 payment_required. wallet_balance is the sum of the account's wallet ledger, after this month's spending above plan_limit has been charged to it.",
  tags: ['Accounts'],
  scope: 'usage:read',
  params: AccountParams,
  response: Balance,
  errors: ['invalid_id', 'not_found'],
  async handler({ runtime, principal, params }) {
    if (canSee(principal, params.acc)) await settleWallet(runtime.database, params.acc)
    return accountBalance(runtime.database, principal, params.acc)
  },
})
