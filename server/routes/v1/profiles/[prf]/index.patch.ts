import { defineApiRoute } from '~/http/define-api-route'
import { PatchProfileBody, Profile, ProfileParams } from '~/domain/profiles/schemas'
import { patchProfile, profileAccount } from '~/domain/profiles/profiles'

export default defineApiRoute({
  summary: 'Update an outbound profile',
  description:
    'Any of name, role, goal, greeting, capabilities, max_call_duration_s, voicemail_policy (hang_up only). variables follows role and greeting. ' +
    'A change of role, goal, greeting or capabilities sets status back to draft (the built prompt no longer matches); ' +
    'prompt_version keeps naming the last built prompt until the next build.',
  tags: ['Outbound'],
  scope: 'outbound:write',
  dataRoute: true,
  params: ProfileParams,
  body: PatchProfileBody,
  patch: true,
  response: Profile,
  errors: ['invalid_id', 'not_found', 'unsupported_field', 'validation_error', 'empty_update', 'unsupported_policy'],
  handler: ({ runtime, account, params, body }) => patchProfile(runtime, profileAccount(account), params.prf, body),
})
