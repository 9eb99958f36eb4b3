import { defineApiRoute } from '~/http/define-api-route'
import { Profile, ProfileParams } from '~/domain/profiles/schemas'
import { getProfile, profileAccount } from '~/domain/profiles/profiles'

export default defineApiRoute({
  summary: 'Read an outbound profile',
  tags: ['Outbound'],
  scope: 'outbound:read',
  dataRoute: true,
  params: ProfileParams,
  response: Profile,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, account, params }) => getProfile(runtime, profileAccount(account), params.prf),
})
