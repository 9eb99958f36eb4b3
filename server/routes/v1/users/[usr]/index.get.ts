import { defineApiRoute } from '~/http/define-api-route'
import { User, UserParams } from '~/domain/users/schemas'
import { getUser } from '~/domain/users/users'

export default defineApiRoute({
  summary: 'Read a tenant user',
  tags: ['Users and credentials'],
  scope: 'users:manage',
  params: UserParams,
  response: User,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, params }) => getUser(runtime.database, params.usr),
})
