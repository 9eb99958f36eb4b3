import { defineApiRoute } from '~/http/define-api-route'
import { dncAccount } from '~/domain/dnc/entries'
import { loadCall, presentCall } from '~/domain/calls/calls'
import { CallParams, CallResource } from '~/domain/calls/outbound-schemas'

export default defineApiRoute({
  summary: 'Get an outbound call',
  description:
    'The call with its status (queued, ringing, in_progress, completed, no_answer, failed, canceled), outcome ' +
    '(answered, voicemail, transferred, interrupted, no_answer, failed, canceled) and, once answered, its conversation. ' +
    "Another account's call is 404 not_found.",
  tags: ['Outbound'],
  scope: 'outbound:read',
  dataRoute: true,
  params: CallParams,
  response: CallResource,
  errors: ['invalid_id', 'not_found'],
  handler: async ({ runtime, account, params }) =>
    presentCall(await loadCall(runtime.database.db, dncAccount(account), params.call)),
})
