import { defineApiRoute } from '~/http/define-api-route'
import { CreateNumberBody, PhoneNumber } from '~/domain/phone-numbers/schemas'
import { createNumber, numberAccount } from '~/domain/phone-numbers/numbers'

export default defineApiRoute({
  summary: 'Add a phone number',
  description:
    'Body {e164, agent_id?, label?}. e164 is an international number (a + then the country code; spaces, hyphens, dots and parentheses ' +
    'between digits are dropped) valid for its country, stored in E.164 form (400 invalid_phone otherwise, national forms included). ' +
    'provider is the configured telephony provider; with a real one (not the simulated network, which owns every number) the ' +
    'number must be one the provider account owns, looked up through the provider (400 number_not_owned otherwise; a lookup the provider fails or does not answer is 502 provider_unavailable and routes nothing, so the request may be retried). agent_id names an agent of the account that answers calls to the number ' +
    "(another account's or an unknown agent is 404 agent_not_found). A number already held by any account is 409 number_taken. Answers 201.",
  tags: ['Phone agents'],
  scope: 'agents:write',
  dataRoute: true,
  status: 201,
  body: CreateNumberBody,
  response: PhoneNumber,
  errors: [
    'invalid_phone',
    'number_not_owned',
    'invalid_id',
    'unsupported_field',
    'validation_error',
    'agent_not_found',
    'number_taken',
    'provider_unavailable',
  ],
  handler: ({ runtime, account, body }) => createNumber(runtime, numberAccount(account), body),
})
