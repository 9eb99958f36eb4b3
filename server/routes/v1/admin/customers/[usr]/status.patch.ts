import { setStatus } from '~/domain/admin/customers'
import { Customer, CustomerParams, StatusBody } from '~/domain/admin/schemas'
import { defineAdminRoute } from '~/http/define-admin-route'

export default defineAdminRoute({
  summary: 'Suspend or resume a customer',
  description:
    'suspended: the user and its account are suspended, and every key, session and OAuth token of the account is refused with 403 account_suspended from the next request on. active: they work again at once. The reason is kept in the action log.',
  params: CustomerParams,
  body: StatusBody,
  patch: true,
  response: Customer,
  errors: ['invalid_id', 'not_found', 'validation_error', 'unsupported_field'],
  action: 'customer.status',
  handler: ({ runtime, params, body }) => setStatus(runtime.database, params.usr, body.status),
})
