import { defineApiRoute } from '~/http/define-api-route'
import { ProfileBuild, ProfileParams } from '~/domain/profiles/schemas'
import { profileAccount } from '~/domain/profiles/profiles'
import { getLatestProfileBuild } from '~/domain/profiles/build'

export default defineApiRoute({
  summary: "An outbound profile's latest build",
  description: 'The agent build object (one step, instructions) plus profile_id; 404 not_found before the first build.',
  tags: ['Outbound'],
  scope: 'outbound:read',
  dataRoute: true,
  params: ProfileParams,
  response: ProfileBuild,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, account, params }) =>
    getLatestProfileBuild(runtime.database, profileAccount(account), params.prf),
})
