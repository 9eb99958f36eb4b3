// Carries out one agent test run (decisions "Test runs"). Safe to deliver twice: executeRun claims the run and
// appends each attempt once; a failure inside the run ends it `error` instead of failing the job, so a run that
// cannot succeed is not retried for ever. A run of many phone tests may take long: its delivery may too.
import { defineJob } from '~/kit/job'
import { executeRun } from '~/domain/agent-tests/execute'
import { RUN_JOB } from '~/domain/agent-tests/runs'

export default defineJob<{ run_id: string }>({
  name: RUN_JOB,
  retryLimit: 2,
  concurrency: 1,
  expireInSeconds: 3 * 3600,
  async run(data, ctx) {
    if (typeof data.run_id === 'string') await executeRun(ctx, data.run_id)
  },
})
