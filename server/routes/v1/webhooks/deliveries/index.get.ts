import * as v from 'valibot'
import { asList, defineApiRoute } from '~/http/define-api-route'
import { Delivery, DeliveryListQuery } from '~/domain/webhooks/schemas'
import { webhookAccount } from '~/domain/webhooks/endpoints'
import { listDeliveries } from '~/domain/webhooks/deliveries'

export default defineApiRoute({
  summary: 'List webhook deliveries',
  description:
    'Newest first, keyset pages. Filters: endpoint_id, event (an event name, or ping for the test pings), event_id, status (pending, retrying, succeeded, ' +
    'exhausted), since (created at or after). Each delivery lists its attempts with status code, latency and error. Test pings (POST …/test) are ' +
    'listed too, with event_type ping: succeeded, or exhausted when the receiver failed (a ping is never retried).',
  tags: ['Webhooks'],
  scope: 'webhooks:manage',
  dataRoute: true,
  query: DeliveryListQuery,
  response: v.object({ data: v.array(Delivery) }),
  errors: ['invalid_id', 'invalid_date', 'invalid_limit', 'invalid_cursor', 'unsupported_filter'],
  handler: async ({ runtime, account, query, keyset }) => {
    const accountId = webhookAccount(account)
    const { limit, cursor, ...filters } = query
    const page = await keyset({
      filters: { ...filters, account_id: accountId },
      sort: '-created_at,-id',
      limit,
      cursor,
    })
    return asList(await listDeliveries(runtime, accountId, filters, page))
  },
})
