// A test run is committed before its job is sent; a crash in between would leave it queued for ever. This
// sweep re-sends runs still queued after a minute (and at every start), and unfinished ones whose jobs have
// all ended; the run's claim makes a duplicate harmless.
import { defineJob } from '~/kit/job'
import { RUN_JOB, strandedRuns } from '~/domain/agent-tests/runs'

export default defineJob({
  name: 'agent_tests.requeue',
  schedule: '* * * * *',
  runAtStart: true,
  async run(_data, { database, send, config }) {
    for (const id of await strandedRuns(database, 60_000, config.queueSchema))
      await send(RUN_JOB, { run_id: id }, { singletonKey: id })
  },
})
