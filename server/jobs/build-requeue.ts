// A build (agent or profile) is committed before its job is sent; a crash in between would leave it queued
// for ever. This sweep re-sends builds still queued after a minute (and at every start), and running ones
// whose jobs have all ended without recording the build's end (strandedIn); a duplicate job is harmless
// because runBuild and runProfileBuild claim the build first.
import { defineJob } from '~/kit/job'
import { BUILD_JOB, strandedBuilds } from '~/domain/builds/builds'
import { PROFILE_BUILD_JOB, strandedProfileBuilds } from '~/domain/profiles/build'

export default defineJob({
  name: 'agent.build-requeue',
  schedule: '* * * * *',
  runAtStart: true,
  async run(_data, { database, send, config }) {
    for (const id of await strandedBuilds(database, 60_000, config.queueSchema)) await send(BUILD_JOB, { build_id: id })
    for (const id of await strandedProfileBuilds(database, 60_000, config.queueSchema))
      await send(PROFILE_BUILD_JOB, { build_id: id })
  },
})
