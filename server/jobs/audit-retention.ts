// Audit rows are kept 12 months (contract Limits). Deleting by age is idempotent, so a redelivered or
// overlapping run is harmless; the domain function deletes in bounded batches.
import { defineJob } from '~/kit/job'
import { deleteExpiredAudit, retentionCutoff } from '~/domain/audit/audit'

export default defineJob({
  name: 'audit.retention',
  schedule: '41 3 * * *',
  async run(_data, { database, log }) {
    const deleted = await deleteExpiredAudit(database, retentionCutoff())
    if (deleted) log(`deleted ${deleted} audit rows older than 12 months`)
  },
})
