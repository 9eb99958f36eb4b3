import { setPlan } from '~/domain/admin/customers'
import { Customer, CustomerParams, PlanBody } from '~/domain/admin/schemas'
import { defineAdminRoute } from '~/http/define-admin-route'

export default defineAdminRoute({
  summary: "Change a customer's plan",
  description:
    "Sets the account's plan, its expiry (a trial runs 30 days from now unless plan_expires_at is given; other plans none unless given) and the monthly plan_limit (the plan's price unless given: spending above it is charged to the wallet).",
  params: CustomerParams,
  body: PlanBody,
  patch: true,
  response: Customer,
  errors: ['invalid_id', 'not_found', 'validation_error', 'unsupported_field', 'invalid_date'],
  action: 'customer.plan',
  handler: ({ runtime, params, body }) => setPlan(runtime.database, params.usr, body),
})
