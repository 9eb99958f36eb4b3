import { defineApiRoute } from '~/http/define-api-route'
import { User, UserParams, UserPatch } from '~/domain/users/schemas'
import { patchingPartner, patchUser } from '~/domain/users/users'

export default defineApiRoute({
  summary: 'Update a tenant user',
  description:
    'status (active or suspended; trial is derived from the plan and refused), external_ids merged key by key (null clears a key), limits overrides, transcript_retention_days, password (at least 12 characters; ends pending reset links and every dashboard session of the user). The master key may change any user and field. A `partners:manage` key may change only the password, and only of its partner members’ users (any other user, existing or not, is 403 `forbidden_account`; another field is 403 `insufficient_scope`).',
  tags: ['Users and credentials'],
  scope: 'users:manage',
  anyScope: ['partners:manage'],
  params: UserParams,
  body: UserPatch,
  patch: true,
  response: User,
  errors: ['invalid_id', 'not_found', 'forbidden_account'],
  // A partner's change of its member is audited cross_account on the member's account (auditMemberParams).
  handler: ({ runtime, principal, params, body }) =>
    patchUser(runtime.database, params.usr, body, patchingPartner(principal)),
})
