import { defineApiRoute } from '~/http/define-api-route'
import { dncAccount } from '~/domain/dnc/entries'
import { cancelCall } from '~/domain/calls/outbound'
import { CallParams, CallResource } from '~/domain/calls/outbound-schemas'

export default defineApiRoute({
  summary: 'Cancel an outbound call',
  description:
    'A queued call is dropped before it dials; a ringing one is hung up at the provider. 200 with the call `canceled`; ' +
    'any other status is 409 call_not_cancelable. A canceled call emits no event.',
  tags: ['Outbound'],
  scope: 'outbound:write',
  dataRoute: true,
  params: CallParams,
  response: CallResource,
  errors: ['invalid_id', 'not_found', 'call_not_cancelable'],
  handler: ({ runtime, account, params }) => cancelCall(runtime, dncAccount(account), params.call),
})
