// Usage above the plan limit is charged to the wallet as ledger debits (docs/decisions.md "Operator surface:
// customers and the wallet"). Reads settle the account they show; this sweep settles every account with
// recent usage, so the ledger follows spending without anyone looking. Settlement is idempotent under the
// subscription row lock, so an overlapping run or a concurrent read adds nothing twice.
import { defineJob } from '~/kit/job'
import { settleRecentWallets } from '~/domain/admin/wallet'

export default defineJob({
  name: 'wallet.settle',
  schedule: '*/10 * * * *',
  async run(_data, { database }) {
    await settleRecentWallets(database)
  },
})
