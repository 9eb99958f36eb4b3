// Runs one agent build. Safe to deliver twice: runBuild claims the build before working on it.
import { defineJob } from '~/kit/job'
import { runBuild } from '~/domain/builds/run'

export default defineJob<{ build_id: string }>({
  name: 'agent.build',
  retryLimit: 2,
  concurrency: 2,
  async run(data, ctx) {
    await runBuild(ctx, data.build_id)
  },
})
