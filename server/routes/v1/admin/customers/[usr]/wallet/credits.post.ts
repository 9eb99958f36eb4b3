import { CustomerParams, WalletCreditBody, WalletEntry } from '~/domain/admin/schemas'
import { addWalletEntry, customerAccount } from '~/domain/admin/wallet'
import { defineAdminRoute } from '~/http/define-admin-route'
import { requestIdOf } from '~/http/envelope'
import { Errors } from '~/lib/errors'

export default defineAdminRoute({
  summary: "Top up (or adjust) a customer's wallet",
  description:
    "Adds an entry to the account's wallet ledger: kind credit (default; amount more than 0) or adjustment (any non-zero amount; negative corrects down). Usage above the plan limit is settled first, in the same transaction. A top-up that makes the wallet positive clears the account's 402 payment_required on its next request.",
  params: CustomerParams,
  body: WalletCreditBody,
  status: 201,
  response: WalletEntry,
  errors: ['invalid_id', 'not_found', 'validation_error', 'unsupported_field'],
  action: 'customer.wallet.credit',
  async handler({ runtime, params, body, event }) {
    if (body.kind === 'credit' && body.amount <= 0) throw Errors.validation('amount', 'A credit must be more than 0.')
    if (body.amount === 0) throw Errors.validation('amount', 'An adjustment must not be 0.')
    const { accountId } = await customerAccount(runtime.database, params.usr)
    return addWalletEntry(runtime.database, accountId, {
      amount: body.amount,
      kind: body.kind,
      reason: body.reason,
      requestId: requestIdOf(event),
    })
  },
})
