import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { Account, AccountListQuery } from '~/domain/accounts/schemas'
import { listAccounts } from '~/domain/accounts/accounts'

export default defineApiRoute({
  summary: 'List accounts',
  description:
    'The master key lists every account (its audit row is cross_account); a personal key lists the accounts on it. account_id may repeat; one not on the credential is 403 forbidden_account.',
  tags: ['Accounts'],
  scope: 'accounts:read',
  query: AccountListQuery,
  repeatable: ['account_id'],
  response: v.object({ data: v.array(Account) }),
  errors: ['invalid_date', 'invalid_limit', 'invalid_cursor', 'invalid_id'],
  async handler({ event, runtime, principal, keyset, query }) {
    const { cursor, limit, ...filters } = query
    const page = await keyset({
      filters,
      sort: '-created_at',
      limit,
      cursor,
    })
    return asList(await listAccounts(runtime.database, principal, filters, page))
  },
})
