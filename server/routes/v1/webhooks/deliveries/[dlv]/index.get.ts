import { defineApiRoute } from '~/http/define-api-route'
import { DeliveryDetail, DeliveryParams } from '~/domain/webhooks/schemas'
import { webhookAccount } from '~/domain/webhooks/endpoints'
import { getDelivery } from '~/domain/webhooks/deliveries'

export default defineApiRoute({
  summary: 'Get a webhook delivery',
  description: 'Additive to the contract: the delivery with its attempts and the payload it sends.',
  tags: ['Webhooks'],
  scope: 'webhooks:manage',
  dataRoute: true,
  params: DeliveryParams,
  response: DeliveryDetail,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, account, params }) => getDelivery(runtime, webhookAccount(account), params.dlv),
})
