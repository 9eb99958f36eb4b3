// Runs one outbound profile build. Safe to deliver twice: runProfileBuild claims the build first.
import { defineJob } from '~/kit/job'
import { runProfileBuild } from '~/domain/profiles/build'

export default defineJob<{ build_id: string }>({
  name: 'profile.build',
  retryLimit: 2,
  concurrency: 2,
  async run(data, ctx) {
    await runProfileBuild(ctx, data.build_id)
  },
})
