import { defineApiRoute } from '~/http/define-api-route'
import { User, UserCreate } from '~/domain/users/schemas'
import { createUser } from '~/domain/users/users'

export default defineApiRoute({
  summary: 'Create a tenant user',
  description:
    'Creates the user, its account and its subscription in one transaction. Plan trial sets plan_expires_at 30 days out. Without a password a random one is generated and never returned.',
  tags: ['Users and credentials'],
  scope: 'users:manage',
  body: UserCreate,
  response: User,
  status: 201,
  errors: ['invalid_email', 'email_exists'],
  handler: ({ runtime, body }) => createUser(runtime.database, body),
})
