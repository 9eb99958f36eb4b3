import { defineApiRoute } from '~/http/define-api-route'
import { NumberParams } from '~/domain/phone-numbers/schemas'
import { deleteNumber, numberAccount } from '~/domain/phone-numbers/numbers'

export default defineApiRoute({
  summary: 'Delete a phone number',
  description:
    'Releases the number at once: calls to it are no longer routed, it reads as 404 afterwards, and any account may add it again. 204.',
  tags: ['Phone agents'],
  scope: 'agents:write',
  dataRoute: true,
  params: NumberParams,
  status: 204,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, account, params }) => deleteNumber(runtime, numberAccount(account), params.num),
})
