import * as v from 'valibot'
import { CustomerParams, WalletEntry, WalletQuery } from '~/domain/admin/schemas'
import { customerAccount, listWalletEntries, settleWallet } from '~/domain/admin/wallet'
import { asList } from '~/http/define-api-route'
import { defineAdminRoute } from '~/http/define-admin-route'

export default defineAdminRoute({
  summary: "A customer's wallet ledger",
  description:
    "Every entry of the account's wallet, newest first (keyset on created_at, id): credits (top-ups), debits (usage above the plan limit, one per settlement of a month) and adjustments. The balance is the sum of the amounts; balance_after is that sum up to and including the entry. Usage is settled into the ledger before it is read.",
  params: CustomerParams,
  query: WalletQuery,
  response: v.object({ data: v.array(WalletEntry) }),
  errors: ['invalid_id', 'not_found', 'invalid_limit', 'invalid_cursor'],
  async handler({ runtime, params, keyset, query }) {
    const { accountId } = await customerAccount(runtime.database, params.usr)
    await settleWallet(runtime.database, accountId)
    const page = await keyset({ filters: {}, sort: '-created_at', limit: query.limit, cursor: query.cursor })
    return asList(await listWalletEntries(runtime.database, accountId, page))
  },
})
