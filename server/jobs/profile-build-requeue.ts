// A profile build is committed before its job is sent; this sweep re-sends builds still queued after a
// minute (and at every start). A duplicate job is harmless: runProfileBuild claims the build first.
import { defineJob } from '~/kit/job'
import { PROFILE_BUILD_JOB, strandedProfileBuilds } from '~/domain/profiles/build'

export default defineJob({
  name: 'profile.build-requeue',
  schedule: '* * * * *',
  runAtStart: true,
  async run(_data, { database, send }) {
    for (const id of await strandedProfileBuilds(database, 60_000)) await send(PROFILE_BUILD_JOB, { build_id: id })
  },
})
