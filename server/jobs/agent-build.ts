// Runs one agent build. Safe to deliver twice: runBuild claims the build before working on it; a
// retry (its previous run died with its instance, or failed outside the steps) takes a running build over.
import { defineJob } from '~/kit/job'
import { runBuild } from '~/domain/builds/run'

export default defineJob<{ build_id: string }>({
  name: 'agent.build',
  retryLimit: 2,
  concurrency: 2,
  async run(data, ctx, { retryCount }) {
    await runBuild(ctx, data.build_id, { takeover: retryCount > 0 })
  },
})
