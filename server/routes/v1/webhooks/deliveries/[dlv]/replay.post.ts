import { defineApiRoute } from '~/http/define-api-route'
import { Delivery, DeliveryParams } from '~/domain/webhooks/schemas'
import { webhookAccount } from '~/domain/webhooks/endpoints'
import { replayDelivery } from '~/domain/webhooks/deliveries'

export default defineApiRoute({
  summary: 'Replay a delivery',
  description:
    'Sends the same event (same event id, same body) again as a new delivery with replayed_from set, due now, with its own retries. 201.',
  tags: ['Webhooks'],
  scope: 'webhooks:manage',
  dataRoute: true,
  params: DeliveryParams,
  status: 201,
  response: Delivery,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, account, params }) => replayDelivery(runtime, webhookAccount(account), params.dlv),
})
