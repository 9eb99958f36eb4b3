// Runs one outbound profile build. Safe to deliver twice: runProfileBuild claims the build first; a retry (its
// previous run died with its instance, or failed outside the steps) takes a running build over.
import { defineJob } from '~/kit/job'
import { runProfileBuild } from '~/domain/profiles/build'

export default defineJob<{ build_id: string }>({
  name: 'profile.build',
  retryLimit: 2,
  concurrency: 2,
  async run(data, ctx, { retryCount }) {
    await runProfileBuild(ctx, data.build_id, { takeover: retryCount > 0 })
  },
})
