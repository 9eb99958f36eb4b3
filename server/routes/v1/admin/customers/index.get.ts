import * as v from 'valibot'
import { searchCustomers } from '~/domain/admin/customers'
import { Customer, CustomerQuery } from '~/domain/admin/schemas'
import { asList } from '~/http/define-api-route'
import { defineAdminRoute } from '~/http/define-admin-route'

export default defineAdminRoute({
  summary: 'Search customers',
  description:
    'Customers (a user and its account), newest first (keyset on created_at, id). q matches a part of the e-mail, name or company name (case-insensitive); status (active, suspended) and plan filter.',
  query: CustomerQuery,
  response: v.object({ data: v.array(Customer) }),
  errors: ['invalid_limit', 'invalid_cursor', 'unsupported_filter'],
  async handler({ runtime, keyset, query }) {
    const { cursor, limit, ...filters } = query
    const page = await keyset({ filters, sort: '-created_at', limit, cursor })
    return asList(await searchCustomers(runtime.database, filters, page))
  },
})
