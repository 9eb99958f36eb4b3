import { defineApiRoute } from '~/http/define-api-route'
import { NumberParams, PatchNumberBody, PhoneNumber } from '~/domain/phone-numbers/schemas'
import { numberAccount, patchNumber } from '~/domain/phone-numbers/numbers'

export default defineApiRoute({
  summary: 'Update a phone number',
  description:
    "Any of agent_id (an agent of the account; null unassigns, and calls to the number are then refused) and label (null clears). The number itself and its provider do not change: delete it and add it again. Another account's agent is 404 agent_not_found.",
  tags: ['Phone agents'],
  scope: 'agents:write',
  dataRoute: true,
  params: NumberParams,
  body: PatchNumberBody,
  patch: true,
  response: PhoneNumber,
  errors: ['invalid_id', 'not_found', 'agent_not_found', 'unsupported_field', 'validation_error', 'empty_update'],
  handler: ({ runtime, account, params, body }) => patchNumber(runtime, numberAccount(account), params.num, body),
})
