import { CustomerParams } from '~/domain/admin/schemas'
import { LoginLink } from '~/domain/sessions/schemas'
import { issueLoginLink } from '~/domain/sessions/sessions'
import { defineAdminRoute } from '~/http/define-admin-route'

export default defineAdminRoute({
  summary: 'Issue a login link for a customer',
  description:
    "A one-time dashboard login link for the customer's user (single use, 15 minutes, every grantable scope), as POST /users/{usr}/login-links answers it to the master key. The token is not kept in the action log.",
  params: CustomerParams,
  status: 201,
  response: LoginLink,
  secretResponse: true,
  errors: ['invalid_id', 'not_found'],
  action: 'customer.login_link',
  handler: ({ runtime, principal, params }) =>
    issueLoginLink(runtime.database, principal, params.usr, runtime.config.publicUrl),
})
