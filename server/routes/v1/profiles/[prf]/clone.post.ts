import { defineApiRoute } from '~/http/define-api-route'
import { Profile, ProfileParams } from '~/domain/profiles/schemas'
import { cloneProfile, profileAccount } from '~/domain/profiles/profiles'

export default defineApiRoute({
  summary: 'Clone an outbound profile',
  description: 'A copy under the same agent named "<name> (copy)", status draft, prompt_version null. Answers 201.',
  tags: ['Outbound'],
  scope: 'outbound:write',
  dataRoute: true,
  status: 201,
  params: ProfileParams,
  response: Profile,
  errors: ['invalid_id', 'not_found'],
  handler: ({ runtime, account, params }) => cloneProfile(runtime, profileAccount(account), params.prf),
})
