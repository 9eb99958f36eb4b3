import { defineApiRoute } from '~/http/define-api-route'
import { User, UserParams, UserPatch } from '~/domain/users/schemas'
import { patchUser } from '~/domain/users/users'

export default defineApiRoute({
  summary: 'Update a tenant user',
  description:
    'status (active or suspended; trial is derived from the plan and refused), external_ids merged key by key (null clears a key), limits overrides, transcript_retention_days.',
  tags: ['Users and credentials'],
  scope: 'users:manage',
  params: UserParams,
  body: UserPatch,
  patch: true,
  response: User,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, params, body }) => patchUser(runtime.database, params.usr, body),
})
