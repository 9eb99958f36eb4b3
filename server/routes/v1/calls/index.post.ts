import { defineApiRoute } from '~/http/define-api-route'
import { dncAccount } from '~/domain/dnc/entries'
import { createCall } from '~/domain/calls/outbound'
import { CallResource, CreateCallBody } from '~/domain/calls/outbound-schemas'

export default defineApiRoute({
  summary: 'Place an outbound call',
  description:
    'Body {agent_id, to, profile_id? or role?, greeting?, from_number_id?, variables?, voicemail_policy?}. ' +
    "The call runs the profile's built prompt (or its role and goal) or the inline role, with {{name}} placeholders " +
    'filled from variables (a missing one is 400 missing_variable), and takes only voice, language and knowledge from the agent. ' +
    'Checks in order: the number (400 invalid_phone for premium-rate, shared-cost, personal, pager, UAN and voicemail-access ' +
    "numbers, and outside the operator's call_countries), the agent and profile (404), the balance (402 payment_required), " +
    'the do-not-call list at dial time (403 dnc_listed), max_calls_per_day (429 quota_exceeded with Retry-After). Answers ' +
    '201 with the call `ringing`, or `queued` when the account already uses max_concurrent_calls lines (it dials when one ' +
    'frees, after the suspension, balance, pause and do-not-call checks again: a refused one ends canceled). The caller id is ' +
    "from_number_id, else the agent's number, else the account's first number. An answering machine ends the call at " +
    'once with outcome voicemail: voicemail_policy is hang_up, the only policy (else 400 unsupported_policy). Rate class calls. ' +
    'With a real telephony provider a trial account cannot place calls (403 plan_limit_reached). ' +
    'Simulated network: numbers ending 0000 do not answer, 9999 fail, 8888 reach an answering machine, 7777 ring for 20 s.',
  tags: ['Outbound'],
  scope: 'outbound:write',
  rateClass: 'calls',
  dataRoute: true,
  status: 201,
  body: CreateCallBody,
  response: CallResource,
  errors: [
    'agent_paused',
    'agent_not_found',
    'not_found',
    'invalid_phone',
    'missing_variable',
    'unsupported_policy',
    'unsupported_field',
    'validation_error',
    'payment_required',
    'dnc_listed',
    'quota_exceeded',
    'plan_limit_reached',
  ],
  handler: ({ runtime, account, body }) => createCall(runtime, dncAccount(account), body),
})
