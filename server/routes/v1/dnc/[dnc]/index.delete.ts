import { defineApiRoute } from '~/http/define-api-route'
import { deleteDnc, dncAccount } from '~/domain/dnc/entries'
import { DncParams } from '~/domain/dnc/schemas'

export default defineApiRoute({
  summary: 'Remove a number from the do-not-call list',
  description: 'Deletes the entry: the number may be dialled again. 204; an unknown or another account’s entry is 404.',
  tags: ['Outbound'],
  scope: 'outbound:write',
  dataRoute: true,
  params: DncParams,
  status: 204,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, account, params }) => deleteDnc(runtime, dncAccount(account), params.dnc),
})
