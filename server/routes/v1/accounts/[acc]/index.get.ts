import { defineApiRoute } from '~/http/define-api-route'
import { Account, AccountParams } from '~/domain/accounts/schemas'
import { getAccount } from '~/domain/accounts/accounts'

export default defineApiRoute({
  summary: 'Read an account',
  tags: ['Accounts'],
  scope: 'accounts:read',
  params: AccountParams,
  response: Account,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, principal, params }) => getAccount(runtime.database, principal, params.acc),
})
