import { defineApiRoute } from '~/http/define-api-route'
import { ProfileBuild, ProfileParams } from '~/domain/profiles/schemas'
import { profileAccount } from '~/domain/profiles/profiles'
import { PROFILE_BUILD_JOB, startProfileBuild } from '~/domain/profiles/build'

export default defineApiRoute({
  summary: "Build an outbound profile's prompt",
  description:
    "One step, instructions: the chat engine writes the phone prompt from the role and the agent's knowledge summary, then the goal is appended. " +
    'The prompt is stored as an immutable version whose label (build-<n>) becomes prompt_version, and status turns ready. ' +
    '409 build_in_progress while a build of the profile is queued or running. 402 payment_required when billing blocks; takes one builds unit.',
  tags: ['Outbound'],
  scope: 'outbound:write',
  rateClass: 'build',
  dataRoute: true,
  params: ProfileParams,
  status: 202,
  response: ProfileBuild,
  errors: ['invalid_id', 'not_found', 'build_in_progress', 'payment_required', 'quota_exceeded'],
  async handler({ runtime, account, params }) {
    const build = await startProfileBuild(runtime.database, profileAccount(account), params.prf)
    await runtime.queue.send(PROFILE_BUILD_JOB, { build_id: build.build_id })
    return build
  },
})
