import { defineApiRoute } from '~/http/define-api-route'
import { NumberParams, PhoneNumber } from '~/domain/phone-numbers/schemas'
import { getNumber, numberAccount } from '~/domain/phone-numbers/numbers'

export default defineApiRoute({
  summary: 'Get a phone number',
  description:
    "The number and the agent it is assigned to (null when none). Another account's number is 404 not_found.",
  tags: ['Phone agents'],
  scope: 'agents:read',
  dataRoute: true,
  params: NumberParams,
  response: PhoneNumber,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, account, params }) => getNumber(runtime, numberAccount(account), params.num),
})
