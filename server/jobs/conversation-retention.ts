// Daily retention sweep (and once at start, to catch up after downtime): soft-deletes conversations past
// their account's transcript_retention_days. Idempotent: deleted rows are never picked again.
import { defineJob } from '~/kit/job'
import { sweepRetention } from '~/domain/conversations/retention'

export default defineJob({
  name: 'conversations.retention-sweep',
  schedule: '17 3 * * *',
  runAtStart: true,
  async run(_data, { database, log }) {
    const n = await sweepRetention(database)
    if (n) log(`retention: soft-deleted ${n} conversation(s)`)
  },
})
